package reconcile

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/reconcile/assess"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
)

// unwatchedPoll is how often readiness is looked at while objects are not
// ready and the kind does not watch its dependent objects.
const unwatchedPoll = 10 * time.Second

// maintain keeps an up-to-date release as its deployed revision says, without
// a new revision: it watches the kinds of the release's objects, puts back
// objects deleted or edited outside Helm, and assesses readiness.
//
// Precondition: the newest deployed revision has the wanted values and chart.
// Sets: Released True; Ready True when every object is ready, else False
// naming the first object that is not (ReadinessTimeout once the kind's
// remediation.readinessTimeout has passed); event DriftRepaired per object
// put back.
func (r *Reconciler) maintain(ctx context.Context, o *observation) (ctrl.Result, error) {
	if err := r.watcher.Watch(o.Deployed.Objects); err != nil {
		return ctrl.Result{}, err
	}
	r.assess(ctx, o, true)
	r.reportDrift(o)
	r.markReady(ctx, o)
	if err := r.runTests(ctx, o); err != nil {
		return ctrl.Result{}, err
	}
	res := ctrl.Result{RequeueAfter: r.Watch.ReconcilePeriod}
	if !o.Health.Ready && !r.Watch.WatchDependentResources {
		res.RequeueAfter = unwatchedPoll
	}
	// A revision not Ready yet is looked at again when its readiness timeout
	// ends: nothing else may happen to trigger a reconcile then.
	if left := r.readinessDeadline(o); !o.Health.Ready && left > 0 {
		res = requeueWithin(res, left+100*time.Millisecond)
	}
	return res, nil
}

// assess reads the live objects of the deployed revision, repairing drift
// when repair is set and the kind's drift mode is enabled (package assess),
// and records their health in o, and in a report the objects that differ.
func (r *Reconciler) assess(ctx context.Context, o *observation, repair bool) {
	if o.Deployed == nil {
		return
	}
	h, drift := r.assessor.Assess(ctx, assess.Target{
		Resource: o.Resource, Actor: o.actor, Revision: o.Deployed, Seen: o.seen, Scope: r.scope(o),
	}, repair)
	o.Health = &h
	if drift != nil {
		o.Drift = drift
	}
}

// reportDrift records, in warn mode, an event when the objects that differ
// from the deployed revision are not those the Drifted condition already
// names. The condition itself is written with the status.
func (r *Reconciler) reportDrift(o *observation) {
	if o.Drift == nil || len(*o.Drift) == 0 {
		return
	}
	msg := status.DriftCondition(&o.Observation).Message
	if prev := status.ConditionOf(o.Resource, status.ConditionDrifted); prev != nil && prev.Status == metav1.ConditionTrue && prev.Message == msg {
		return
	}
	r.Recorder.Eventf(o.Resource, nil, corev1.EventTypeWarning, status.ReasonDriftDetected, "Compare", "%s", msg)
}
