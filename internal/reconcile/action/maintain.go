package action

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/reconcile/assess"
	"github.com/rudder-operator/rudder/internal/reconcile/charttest"
	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/stored"
)

// unwatchedPoll is how often readiness is looked at while objects are not
// ready and the kind does not watch its dependent objects.
const unwatchedPoll = 10 * time.Second

// Maintain keeps an up-to-date release as its deployed revision says,
// without a new revision: it watches the kinds of the release's objects,
// puts back objects deleted or edited outside Helm (or reports them, as the
// kind's drift mode says), assesses readiness and runs the chart tests when
// they are due.
//
// Precondition: the newest deployed revision has the wanted values and chart.
// Sets: Released True; Ready True when every object is ready, else False
// naming the first object that is not (ReadinessTimeout once the kind's
// remediation.readinessTimeout has passed); Drifted in warn mode; events
// DriftRepaired per object put back, DriftDetected when the objects that
// differ change.
type Maintain struct {
	// Watcher watches the kinds of the releases' objects (enqueue.Dependents).
	Watcher interface {
		Watch(objs []*unstructured.Unstructured) error
	}
	Assessor assess.Assessor
	Tests    charttest.Tester
	Events   events.EventRecorder
	Clock    clock.PassiveClock
	// ReadinessTimeout is the kind's remediation.readinessTimeout: a
	// revision Ready once within it is labeled so (stored.LabelReady).
	ReadinessTimeout time.Duration
	Period           time.Duration // the kind's reconcilePeriod
	// Watched: the kind watches its dependent objects, whose events end a
	// wait for readiness; else readiness is polled (unwatchedPoll).
	Watched bool
}

// Run maintains rel's deployed revision.
func (s Maintain) Run(ctx context.Context, rel *Release) (Result, error) {
	if err := s.Watcher.Watch(rel.Deployed.Objects); err != nil {
		return Result{}, err
	}
	h, drift := s.Assessor.Assess(ctx, assess.Target{
		Resource: rel.Resource, Actor: rel.Actor, Revision: rel.Deployed, Seen: rel.Seen, Scope: rel.Scope,
	}, !plan.HoldsRepair(rel.Facts))
	rel.Health = &h
	if drift != nil {
		rel.Drift = drift
	}
	s.reportDrift(rel)
	s.markReady(ctx, rel)
	if err := s.Tests.Run(ctx, rel.Observation, rel.Key, rel.Helm); err != nil {
		return Result{}, err
	}
	res := ctrl.Result{RequeueAfter: s.Period}
	if !h.Ready && !s.Watched {
		res.RequeueAfter = unwatchedPoll
	}
	// A revision not Ready yet is looked at again when its readiness timeout
	// ends: nothing else may happen to trigger a reconcile then.
	if left := plan.ReadinessLeft(rel.Deployed.Updated, s.ReadinessTimeout, s.Clock.Now()); !h.Ready && left > 0 {
		if wake := left + 100*time.Millisecond; wake < res.RequeueAfter || res.RequeueAfter == 0 {
			res.RequeueAfter = wake
		}
	}
	return Result{Result: res}, nil
}

// reportDrift records, in warn mode, an event when the objects that differ
// from the deployed revision are not those the Drifted condition already
// names. The condition itself is written with the status.
func (s Maintain) reportDrift(rel *Release) {
	if rel.Drift == nil || len(*rel.Drift) == 0 {
		return
	}
	msg := status.DriftCondition(rel.Observation).Message
	if prev := status.ConditionOf(rel.Resource, status.ConditionDrifted); prev != nil && prev.Status == metav1.ConditionTrue && prev.Message == msg {
		return
	}
	s.Events.Eventf(rel.Resource, nil, corev1.EventTypeWarning, status.ReasonDriftDetected, "Compare", "%s", msg)
}

// markReady labels the deployed revision LabelReady once it is first seen
// Ready, when the kind has a readiness timeout: a revision Ready once is past
// its timeout for good, across restarts too.
func (s Maintain) markReady(ctx context.Context, rel *Release) {
	d := rel.Facts.Deployed
	if s.ReadinessTimeout == 0 || !rel.Health.Ready || !plan.WrittenByRudder(d) || d.Labels[stored.LabelReady] == "true" {
		return
	}
	if _, err := rel.Helm.Label(rel.Release.Name, d.Number, map[string]string{stored.LabelReady: "true"}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Cannot mark a revision Ready", "revision", d.Number)
	}
}
