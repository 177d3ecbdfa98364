package reconcile

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
)

// reportOutOfBand records an event the first time this process sees another
// Helm client's revision serving a release.
func (r *Reconciler) reportOutOfBand(ctx context.Context, o *observation) {
	d := o.Facts.Serving
	if !plan.ServedOutOfBand(o.Facts) || !r.memory.firstNotice(o.key, d.UID) {
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
