package reconcile

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/storage"
)

// stalled reports whether the deployed revision, written by rudder for the
// wanted digests, has not become Ready within the kind's readinessTimeout
// after its deploy and was never seen Ready. It assesses readiness only once
// the deadline has passed.
func (r *Reconciler) stalled(ctx context.Context, o *observation) bool {
	f := o.Facts
	if r.Watch.Remediation.ReadinessTimeout == 0 || f.Deployed == nil || o.Deployed == nil ||
		!plan.WrittenByRudder(f.Deployed) || plan.DigestsOf(f.Deployed) != f.Want {
		return false
	}
	if r.readinessDeadline(o) > 0 || f.Deployed.Labels[storage.LabelReady] == "true" {
		return false
	}
	r.assess(ctx, o, false)
	return !o.Health.Ready
}

// readinessDeadline returns how long the deployed revision has left to
// become Ready; 0 when it has no deadline or the deadline has passed.
func (r *Reconciler) readinessDeadline(o *observation) time.Duration {
	t := r.Watch.Remediation.ReadinessTimeout
	if t == 0 || o.Deployed == nil || o.Deployed.Updated.IsZero() {
		return 0
	}
	return max(0, o.Deployed.Updated.Add(t).Sub(r.now()))
}

// markReady labels the deployed revision LabelReady once it is first seen
// Ready, when the kind has a readiness timeout: a revision Ready once is past
// its timeout for good, across restarts too.
func (r *Reconciler) markReady(ctx context.Context, o *observation) {
	d := o.Facts.Deployed
	if r.Watch.Remediation.ReadinessTimeout == 0 || o.Health == nil || !o.Health.Ready ||
		!plan.WrittenByRudder(d) || d.Labels[storage.LabelReady] == "true" {
		return
	}
	hc, err := r.helmFor(o)
	if err == nil {
		_, err = hc.Label(o.Release.Name, d.Number, map[string]string{storage.LabelReady: "true"})
	}
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Cannot mark a revision Ready", "revision", d.Number)
	}
}
