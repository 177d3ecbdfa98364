package leader

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/rudder-operator/rudder/internal/hook"
)

// DefaultLeaseDuration is the Lease's duration when spec.leaseDuration is unset.
const DefaultLeaseDuration = 15 * time.Second

// spec is what the hook reads of a resource's spec.
type spec struct {
	selector      labels.Selector
	leaseDuration time.Duration
}

// specOf reads spec.selector (required, not empty) and spec.leaseDuration
// from values; a wrong one is a *hook.FieldError naming it.
func specOf(values map[string]any) (spec, error) {
	sel, err := selectorOf(values)
	if err != nil {
		return spec{}, err
	}
	s := spec{selector: sel, leaseDuration: DefaultLeaseDuration}
	d, found, err := hook.String(values, "leaseDuration")
	if err != nil {
		return spec{}, err
	}
	if found && d != "" {
		if s.leaseDuration, err = time.ParseDuration(d); err != nil || s.leaseDuration < time.Second {
			return spec{}, &hook.FieldError{Field: "leaseDuration",
				Problem: fmt.Sprintf("%q is not a duration of at least 1s; write one such as 15s", d)}
		}
	}
	return s, nil
}

// selectorOf reads spec.selector as a label selector that selects something.
func selectorOf(values map[string]any) (labels.Selector, error) {
	raw, ok := values["selector"].(map[string]any)
	if !ok {
		return nil, &hook.FieldError{Field: "selector", Problem: "is missing; set matchLabels or matchExpressions to the labels of the pods that elect"}
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
		return nil, &hook.FieldError{Field: "selector", Problem: "is not a label selector: " + err.Error()}
	}
	if len(ls.MatchLabels) == 0 && len(ls.MatchExpressions) == 0 {
		return nil, &hook.FieldError{Field: "selector", Problem: "is empty and would select every pod of the namespace; set matchLabels or matchExpressions"}
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return nil, &hook.FieldError{Field: "selector", Problem: err.Error()}
	}
	return sel, nil
}
