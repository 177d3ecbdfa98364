package reconcile

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/hook"
)

// gated is the answer of the gate that holds an upgrade.
type gated struct {
	hook string
	res  hook.GateResult
	err  error
}

// gate asks the kind's gates, in order, whether the planned upgrade of o may
// go ahead; it returns the first that holds it, nil when none does.
func (r *Reconciler) gate(ctx context.Context, o *observation) *gated {
	if o.deployed == nil {
		return nil
	}
	for _, h := range r.Hooks {
		g, ok := h.(hook.Gate)
		if !ok {
			continue
		}
		objs := make([]*unstructured.Unstructured, len(o.deployed.objects))
		for i, obj := range o.deployed.objects {
			objs[i] = obj.DeepCopy() // this reconcile's: not the gate's to change
		}
		res, err := g.BeforeUpgrade(ctx, o.obj, objs, runtime.DeepCopyJSON(o.values))
		if err != nil || !res.Open {
			return &gated{hook: h.Name(), res: res, err: err}
		}
	}
	return nil
}

// held runs the step of an upgrade a gate holds: status says why, and the
// gate's requeue, the hooks' own (withHookRequeue), or on error the
// controller's backoff, asks again.
func (r *Reconciler) held(o *observation) (ctrl.Result, error) {
	if o.gate.err != nil {
		return ctrl.Result{}, fmt.Errorf("hook %s before the upgrade: %w", o.gate.hook, o.gate.err)
	}
	return ctrl.Result{RequeueAfter: o.gate.res.RequeueAfter}, nil
}
