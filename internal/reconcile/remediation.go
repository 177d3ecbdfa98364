package reconcile

import (
	"context"

	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/stored"
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
	if plan.ReadinessLeft(o.Deployed.Updated, r.Watch.Remediation.ReadinessTimeout, r.now()) > 0 || f.Deployed.Labels[stored.LabelReady] == "true" {
		return false
	}
	r.assess(ctx, o, false)
	return !o.Health.Ready
}
