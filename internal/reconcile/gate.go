package reconcile

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
)

// gate asks the kind's gates, in order, whether the planned upgrade of o may
// go ahead; it returns the first that holds it, nil when none does.
func (r *Reconciler) gate(ctx context.Context, o *observation) *status.Gate {
	if o.Deployed == nil {
		return nil
	}
	for _, h := range r.Hooks {
		g, ok := h.(hook.Gate)
		if !ok {
			continue
		}
		objs := make([]*unstructured.Unstructured, len(o.Deployed.Objects))
		for i, obj := range o.Deployed.Objects {
			objs[i] = obj.DeepCopy() // this reconcile's: not the gate's to change
		}
		res, err := g.BeforeUpgrade(ctx, o.Resource, objs, runtime.DeepCopyJSON(o.values.Values))
		if err != nil || !res.Open {
			return &status.Gate{Hook: h.Name(), Result: res, Err: err}
		}
	}
	return nil
}

// held runs the step of an upgrade a gate holds: status says why, and the
// gate's requeue, the hooks' own (withHookRequeue), or on error the
// controller's backoff, asks again.
func (r *Reconciler) held(o *observation) (ctrl.Result, error) {
	if o.Gate.Err != nil {
		return ctrl.Result{}, fmt.Errorf("hook %s before the upgrade: %w", o.Gate.Hook, o.Gate.Err)
	}
	return ctrl.Result{RequeueAfter: o.Gate.Result.RequeueAfter}, nil
}
