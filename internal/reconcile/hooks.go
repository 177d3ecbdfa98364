package reconcile

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
)

// runHooks runs the kind's hooks in order, the last step of the kind's
// values pipeline: the values each returns are merged into o's. The first
// failure stops the rest and blocks Helm steps.
func (r *Reconciler) runHooks(ctx context.Context, o *observation) {
	ctx, err := r.hookContext(ctx, o)
	if err != nil {
		o.Facts.HookErr = err
		return
	}
	r.Watch.Values().RunHooks(ctx, o.Resource, r.Hooks, &o.values, func(h hook.Hook, res hook.Result, err error) bool {
		if err == nil || !helm.NamespaceTerminating(err) {
			hookRuns.WithLabelValues(r.Watch.GVK.Kind, h.Name(), result(err)).Inc()
		}
		o.Hooks = append(o.Hooks, status.HookRun{Hook: h, Result: res, Err: err})
		if err != nil {
			if helm.NamespaceTerminating(err) { // not the hook's failure: Reconcile says why it stops
				ctrl.LoggerFrom(ctx).V(1).Info("Hook stopped: the namespace is being deleted", "hook", h.Name(), "error", err.Error())
			} else {
				ctrl.LoggerFrom(ctx).Error(err, "Hook failed", "hook", h.Name())
			}
			o.Facts.HookErr = fmt.Errorf("hook %s: %w", h.Name(), err)
			return false
		}
		if res.BlocksRelease && res.Condition.Status != metav1.ConditionTrue {
			o.Facts.HookErr = fmt.Errorf("hook %s: %s", h.Name(), res.Condition.Message)
			return false
		}
		return true
	})
}

// pausedHooks has the kind's hooks that implement hook.Pauser say, in o's
// status, that its resource is paused; the others keep what they last wrote.
func (r *Reconciler) pausedHooks(o *observation) {
	for _, h := range r.Hooks {
		if p, ok := h.(hook.Pauser); ok {
			res := p.Paused(o.Resource)
			res.Values, res.RequeueAfter = nil, 0
			o.Hooks = append(o.Hooks, status.HookRun{Hook: h, Result: res})
		}
	}
}

// withHookRequeue shortens res's requeue to the soonest a hook asked for: a
// hook polls what rudder does not watch (a Job it started, say).
func withHookRequeue(res ctrl.Result, o *observation) ctrl.Result {
	for _, run := range o.Hooks {
		res = requeueWithin(res, run.Result.RequeueAfter)
	}
	return res
}

// hookContext returns ctx carrying the client hooks write with for o's
// resource (hook.WithActing): the account rudder acts as for it.
func (r *Reconciler) hookContext(ctx context.Context, o *observation) (context.Context, error) {
	c, err := r.actingClient(o)
	if err != nil {
		return ctx, err
	}
	if c == r.Client {
		return ctx, nil
	}
	return hook.WithActing(ctx, c), nil
}
