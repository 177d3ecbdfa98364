package status

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rudder-operator/rudder/internal/hook"
)

// HookRun is what one hook did in one reconcile.
type HookRun struct {
	Hook   hook.Hook
	Result hook.Result
	Err    error
}

// Gate is the answer of the gate that holds an upgrade.
type Gate struct {
	Hook   string
	Result hook.GateResult
	Err    error
}

// hookConditions returns the condition each hook owns, as this reconcile left it.
func hookConditions(o *Observation) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(o.Hooks))
	for _, run := range o.Hooks {
		c := run.Result.Condition
		c.Type = run.Hook.Condition()
		switch {
		case run.Err != nil:
			c.Status, c.Reason, c.Message = metav1.ConditionFalse, ReasonHookFailed, run.Err.Error()
		case c.Status == "":
			c.Status = metav1.ConditionTrue
		}
		if c.Reason == "" {
			c.Reason = "Reconciled"
		}
		out = append(out, c)
	}
	return out
}

// HookStatus returns the top-level status fields the hooks own; a nil value
// removes a field.
func HookStatus(o *Observation) map[string]any {
	out := map[string]any{}
	for _, run := range o.Hooks {
		for k, v := range run.Result.Status {
			out[k] = v
		}
	}
	return out
}
