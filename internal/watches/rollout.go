package watches

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Step is one step of a chart rollout: how many of a kind's resources run the new chart once it is done,
// either a count (Percent false) or a percentage of them, rounded up.
type Step struct {
	N       int
	Percent bool
}

// String writes s as a watches file does: 1, or "10%".
func (s Step) String() string {
	if s.Percent {
		return strconv.Itoa(s.N) + "%"
	}
	return strconv.Itoa(s.N)
}

// Of returns how many of total resources step s covers.
func (s Step) Of(total int) int {
	if !s.Percent {
		return min(s.N, total)
	}
	return (total*s.N + 99) / 100
}

// AfterFailure is what a rollout does to the resources that failed once it halts.
type AfterFailure string

const (
	// AfterFailureRollback upgrades each failed resource back to the chart it had, with its current spec.
	AfterFailureRollback AfterFailure = "rollback"
	// AfterFailureKeep leaves each failed resource as it is, for inspection.
	AfterFailureKeep AfterFailure = "keep"
)

// DefaultCanaryLabel marks the resources a rollout upgrades first, when rollout.canaries is absent.
const DefaultCanaryLabel = "rudder.dev/canary"

// Rollout says how a change of a kind's chart reaches its resources: in steps, each gated on readiness,
// halted past a failure budget.
type Rollout struct {
	// Steps are cumulative: each covers the resources of the steps before it. The last is always 100%.
	Steps []Step
	// FailureBudget is how many resources may fail (a failed upgrade, or not Ready within StepTimeout)
	// before the rollout halts.
	FailureBudget int
	// StepTimeout is how long an upgraded resource has to become Ready before it counts as failed.
	StepTimeout time.Duration
	// Soak is how long every resource of a step stays Ready before the next step starts.
	Soak time.Duration
	// Canaries are the resources upgraded first, before those of any other step.
	Canaries labels.Selector
	// OnFailure is what happens to the failed resources once the rollout halts.
	OnFailure AfterFailure
}

// DefaultRollout is a kind's rollout when its entry has none: one canary first, then a tenth, half and all
// of the fleet. A chart change that breaks one resource is halted there, and the canary is rolled back:
// the fleet never runs a chart before some of it ran that chart Ready for a minute.
func DefaultRollout() Rollout {
	return Rollout{
		Steps:         []Step{{N: 1}, {N: 10, Percent: true}, {N: 50, Percent: true}, {N: 100, Percent: true}},
		FailureBudget: 0,
		StepTimeout:   10 * time.Minute,
		Soak:          time.Minute,
		Canaries:      labels.SelectorFromSet(labels.Set{DefaultCanaryLabel: "true"}),
		OnFailure:     AfterFailureRollback,
	}
}

// rolloutFields is the rollout field as written.
type rolloutFields struct {
	Steps         []json.RawMessage     `json:"steps"`
	FailureBudget *int                  `json:"failureBudget"`
	StepTimeout   *string               `json:"stepTimeout"`
	Soak          *string               `json:"soak"`
	Canaries      *metav1.LabelSelector `json:"canaries"`
	OnFailure     *string               `json:"onFailure"`
}

// rollout checks the rollout field and fills in its defaults.
func (e *entry) rollout(f *rolloutFields) Rollout {
	r := DefaultRollout()
	if f == nil {
		return r
	}
	if f.Steps != nil {
		r.Steps = e.rolloutSteps(f.Steps)
	}
	if f.FailureBudget != nil {
		if *f.FailureBudget < 0 {
			e.fail("rollout.failureBudget", nil, "%d is negative; set how many resources may fail before the rollout halts, 0 to halt at the first",
				*f.FailureBudget)
		}
		r.FailureBudget = *f.FailureBudget
	}
	r.StepTimeout = e.rolloutDuration("rollout.stepTimeout", f.StepTimeout, r.StepTimeout, true)
	r.Soak = e.rolloutDuration("rollout.soak", f.Soak, r.Soak, false)
	if f.Canaries != nil {
		sel, err := metav1.LabelSelectorAsSelector(f.Canaries)
		if err != nil {
			e.fail("rollout.canaries", err, "%v; write a Kubernetes label selector (matchLabels, matchExpressions)", err)
		} else {
			r.Canaries = sel
		}
	}
	r.OnFailure = oneOf(e, "rollout.onFailure", f.OnFailure, AfterFailureRollback, AfterFailureKeep)
	return r
}

// rolloutSteps checks rollout.steps: counts or percentages that grow, ending at "100%".
func (e *entry) rolloutSteps(raw []json.RawMessage) []Step {
	const fix = `list counts and percentages that grow and end at "100%", e.g. [1, "10%", "50%", "100%"]`
	var steps []Step
	var lastPercent int
	for i, item := range raw {
		field := fmt.Sprintf("rollout.steps[%d]", i)
		s, err := parseStep(item)
		if err != nil {
			e.fail(field, nil, "%v; %s", err, fix)
			return DefaultRollout().Steps
		}
		if s.Percent {
			if s.N <= lastPercent {
				e.fail(field, nil, "%s does not grow past the step before it; %s", s, fix)
			}
			lastPercent = s.N
		} else if lastPercent > 0 {
			e.fail(field, nil, "a count (%s) after a percentage; %s", s, fix)
		}
		steps = append(steps, s)
	}
	if len(steps) == 0 || steps[len(steps)-1] != (Step{N: 100, Percent: true}) {
		e.fail("rollout.steps", nil, `the last step is not "100%%", so some resources would never get the new chart; %s`, fix)
	}
	return steps
}

// parseStep reads one step: a positive count, or a percentage from 1% to 100%.
func parseStep(raw json.RawMessage) (Step, error) {
	var n int
	if err := json.Unmarshal(raw, &n); err == nil {
		if n < 1 {
			return Step{}, fmt.Errorf("%d is not a positive count", n)
		}
		return Step{N: n}, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || !strings.HasSuffix(s, "%") {
		return Step{}, fmt.Errorf("%s is neither a count nor a percentage", raw)
	}
	p, err := strconv.Atoi(strings.TrimSuffix(s, "%"))
	if err != nil || p < 1 || p > 100 {
		return Step{}, fmt.Errorf("%q is not a percentage from 1%% to 100%%", s)
	}
	return Step{N: p, Percent: true}, nil
}

// rolloutDuration parses a duration of the rollout field; positive says 0 is refused.
func (e *entry) rolloutDuration(field string, s *string, def time.Duration, positive bool) time.Duration {
	if s == nil {
		return def
	}
	d, err := time.ParseDuration(*s)
	switch {
	case err != nil:
		e.fail(field, err, `%q is not a duration; use a Go duration such as "90s" or "10m"`, *s)
	case d < 0 || positive && d == 0:
		e.fail(field, nil, `%q is not positive; use a duration such as "10m", or leave the field out for %s`, *s, def)
	}
	return d
}
