package reconcile

import (
	"context"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/rudder-operator/rudder/internal/reconcile/action"
	"github.com/rudder-operator/rudder/internal/reconcile/charttest"
	"github.com/rudder-operator/rudder/internal/reconcile/plan"
)

// step is a step that acts on a release: one of package action's.
type step interface {
	Run(ctx context.Context, rel *action.Release) (action.Result, error)
}

// newSteps builds the kind's steps that act on a release (package action),
// each with only what it uses.
func (r *Reconciler) newSteps() map[plan.Step]step {
	var clk clock.PassiveClock = clock.RealClock{}
	if r.Clock != nil {
		clk = r.Clock
	}
	w := action.Writer{Holder: r.Holder, Events: r.Recorder, Memory: &r.memory, Clock: clk, ObserveHelm: r.observeHelm}
	rem := r.Watch.Remediation
	chart := action.Chart{Load: r.Watch.LoadChart, MaxHistory: r.Watch.MaxHistory, MaxAttempts: rem.MaxAttempts, Mapper: r.Mapper}
	install := action.Install{Writer: w, Chart: chart}
	tests := charttest.Tester{Test: r.Watch.Test, Memory: &r.memory, Events: r.Recorder, Clock: clk, ObserveHelm: r.observeHelm, Ended: r.testEnded}
	return map[plan.Step]step{
		plan.StepInstall:      install,
		plan.StepUpgrade:      action.Upgrade{Writer: w, Chart: chart},
		plan.StepReinstall:    action.Reinstall{Install: install},
		plan.StepRollback:     action.Rollback{Writer: w, MaxHistory: r.Watch.MaxHistory, MaxAttempts: rem.MaxAttempts},
		plan.StepRollbackDone: action.RollbackDone{Client: r.Client, Events: r.Recorder},
		plan.StepRemediate:    action.Remediate{Writer: w, MaxHistory: r.Watch.MaxHistory, ReadinessTimeout: rem.ReadinessTimeout, Period: r.Watch.ReconcilePeriod},
		plan.StepDropInstall:  action.DropInstall{Writer: w},
		plan.StepUnlock:       action.Unlock{Holder: r.Holder, Events: r.Recorder},
		plan.StepUninstall:    action.Uninstall{Writer: w, Hooks: r.Hooks, Client: r.Client, Finalizer: Finalizer},
		plan.StepNone: action.Maintain{Watcher: r.watcher, Assessor: r.assessor, Tests: tests, Events: r.Recorder, Clock: clk,
			ReadinessTimeout: rem.ReadinessTimeout, Period: r.Watch.ReconcilePeriod, Watched: r.Watch.WatchDependentResources},
	}
}

// runStep runs s, a step that acts on o's release, with a Helm client acting
// as the account rudder acts as for o's resource.
func (r *Reconciler) runStep(ctx context.Context, st plan.Step, s step, o *observation) (ctrl.Result, error) {
	if st == plan.StepUninstall {
		if !controllerutil.ContainsFinalizer(o.Resource, Finalizer) {
			o.done = true
			return ctrl.Result{}, nil
		}
		var err error
		if ctx, err = r.hookContext(ctx, o); err != nil { // hooks finalize as the resource's account
			return ctrl.Result{}, err
		}
	}
	hc, err := r.helmFor(o)
	if err != nil {
		return ctrl.Result{}, err
	}
	res, err := s.Run(ctx, &action.Release{Observation: &o.Observation, Key: o.key, Helm: hc, Values: o.values.Values, Chart: o.chart, Scope: r.scope(o),
		Actor: o.actor, Seen: o.seen})
	o.done = res.Done
	return res.Result, err
}
