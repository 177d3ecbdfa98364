package reconcile

import (
	"context"

	"github.com/rudder-operator/rudder/internal/reconcile/assess"
)

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
