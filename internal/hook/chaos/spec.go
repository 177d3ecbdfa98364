package chaos

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/rudder-operator/rudder/internal/hook"
)

// Actions a round may take on a pod.
const (
	// ActionKill deletes the pod.
	ActionKill = "kill"
	// ActionEvict asks the Eviction API, which PodDisruptionBudgets hold.
	ActionEvict = "evict"
)

// Spec is a PodChaos's spec as the hook reads it, with the chart's defaults
// (charts/podchaos/values.yaml) filled in.
type Spec struct {
	// Selector picks the pods of the resource's namespace; never empty.
	Selector labels.Selector
	// Action is ActionKill (default) or ActionEvict.
	Action string
	// Count is the most pods a round acts on (default 1), unless Percent is set.
	Count int
	// Percent, when not 0, replaces Count: a share of the selected pods.
	Percent int
	// Interval is the time between rounds (default 30s).
	Interval time.Duration
	// Duration is how long rounds start after the first; 0: one round.
	Duration time.Duration
	// MaxUnavailable is the most selected pods a round may leave not Ready (default 1).
	MaxUnavailable int
}

// parseSpec reads values, the resource's spec; a value that is wrong is a
// *hook.FieldError naming it (the CRD refuses most of them first).
func parseSpec(values map[string]any) (Spec, error) {
	s := Spec{Action: ActionKill, Count: 1, Interval: 30 * time.Second, MaxUnavailable: 1}
	raw, isMap := values["selector"].(map[string]any)
	if v, set := values["selector"]; set && v != nil && !isMap {
		return s, &hook.FieldError{Field: "selector", Problem: "is not a mapping; write {matchLabels: {app: my-webapp}}"}
	}
	if raw == nil {
		return s, &hook.FieldError{Field: "selector", Problem: "missing; write the pods to act on, such as {matchLabels: {app: my-webapp}}"}
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
		return s, &hook.FieldError{Field: "selector", Problem: fmt.Sprintf("is not a label selector (%v); write {matchLabels: {app: my-webapp}}", err)}
	}
	if len(ls.MatchLabels) == 0 && len(ls.MatchExpressions) == 0 {
		return s, &hook.FieldError{Field: "selector", Problem: "must not be empty, or every pod of the namespace would be chosen; write {matchLabels: {app: my-webapp}}"}
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return s, &hook.FieldError{Field: "selector", Problem: fmt.Sprintf("%v; fix the selector", err)}
	}
	s.Selector = sel
	if a, found, err := hook.String(values, "action"); err != nil {
		return s, err
	} else if found {
		if a != ActionKill && a != ActionEvict {
			return s, &hook.FieldError{Field: "action", Problem: fmt.Sprintf("%q is not an action; write kill or evict", a)}
		}
		s.Action = a
	}
	if s.Count, err = positive(values, "count", s.Count); err != nil {
		return s, err
	}
	if s.MaxUnavailable, err = positive(values, "maxUnavailable", s.MaxUnavailable); err != nil {
		return s, err
	}
	if p, found, err := hook.String(values, "percent"); err != nil {
		return s, err
	} else if found {
		n, err := strconv.Atoi(strings.TrimSuffix(p, "%"))
		if err != nil || !strings.HasSuffix(p, "%") || n < 1 || n > 100 {
			return s, &hook.FieldError{Field: "percent", Problem: fmt.Sprintf("%q is not a percent from 1%% to 100%%; write such as \"25%%\"", p)}
		}
		s.Percent = n
	}
	if s.Interval, err = duration(values, "interval", s.Interval); err != nil {
		return s, err
	}
	if s.Duration, err = duration(values, "duration", 0); err != nil {
		return s, err
	}
	return s, nil
}

// positive reads the whole number field, def when absent; it must be at least 1.
func positive(values map[string]any, field string, def int) (int, error) {
	n, found, err := hook.Int(values, field)
	switch {
	case err != nil:
		return 0, err
	case !found:
		return def, nil
	case n < 1:
		return 0, &hook.FieldError{Field: field, Problem: fmt.Sprintf("%d is less than 1; write 1 or more", n)}
	}
	return int(n), nil
}

// duration reads the Go duration field, def when absent; it must be more than 0.
func duration(values map[string]any, field string, def time.Duration) (time.Duration, error) {
	s, found, err := hook.String(values, field)
	if err != nil || !found {
		return def, err
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, &hook.FieldError{Field: field, Problem: fmt.Sprintf("%q is not a duration more than 0; write such as \"30s\" or \"5m\"", s)}
	}
	return d, nil
}

// perRound is the most pods a round acts on among selected pods: Count, or
// Percent of them rounded down and at least one.
func (s Spec) perRound(selected int) int {
	if s.Percent == 0 {
		return s.Count
	}
	return max(1, selected*s.Percent/100)
}
