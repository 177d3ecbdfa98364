package reconcile

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/storage"
)

// nextRevision is the number Helm gives the next revision of o's release.
func nextRevision(o *observation) int {
	if o.Facts.Latest == nil {
		return 1
	}
	return o.Facts.Latest.Number + 1
}

// mark makes sure rel, just written by rudder, carries its own number as
// LabelRevision: nextRevision guessed it, and another writer may have
// stored a revision in between.
func (r *Reconciler) mark(ctx context.Context, hc *helm.Client, rel *helm.Release) *helm.Release {
	n := strconv.Itoa(rel.Revision)
	if rel.Labels[storage.LabelRevision] == n {
		return rel
	}
	marked, err := hc.Label(rel.Name, rel.Revision, map[string]string{storage.LabelRevision: n})
	if err != nil {
		// The revision then reads as another client's: at worst one more upgrade.
		ctrl.LoggerFrom(ctx).Error(err, "Cannot mark a revision as rudder's", "revision", rel.Revision)
		return rel
	}
	return marked
}

// reportOutOfBand records an event the first time this process sees another
// Helm client's revision serving a release.
func (r *Reconciler) reportOutOfBand(ctx context.Context, o *observation) {
	d := o.Facts.Deployed
	if d == nil || plan.WrittenByRudder(d) || !r.memory.firstNotice(o.key, d.UID) {
		return
	}
	c := status.OutOfBandCondition(&o.Observation)
	ctrl.LoggerFrom(ctx).Info("Release changed by another Helm client", "revision", d.Number, "policy", r.Watch.OutOfBand)
	r.Recorder.Eventf(o.Resource, nil, corev1.EventTypeWarning, status.ReasonOutOfBand, "Detect", "%s", c.Message)
}

// firstNotice reports whether the out-of-band revision stored in the Secret
// of UID uid is news for key, and remembers it.
func (m *memory) firstNotice(key types.NamespacedName, uid types.UID) bool {
	first := false
	m.update(key, func(e *entry) {
		first = e.noticed != uid
		e.noticed = uid
	})
	return first
}
