package reconcile

import (
	"context"
	"fmt"
	"strconv"

	"github.com/rudder-operator/rudder/internal/reconcile/status"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/storage"
	"github.com/rudder-operator/rudder/internal/watches"
)

// nextRevision is the number Helm gives the next revision of o's release.
func nextRevision(o *observation) int {
	if o.facts.Latest == nil {
		return 1
	}
	return o.facts.Latest.Number + 1
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

// outOfBandCondition describes the newest revision another Helm client
// deployed, nil when history holds none.
func outOfBandCondition(o *observation) *metav1.Condition {
	var rev *storage.Revision
	for i := range o.history {
		h := &o.history[i]
		if (h.Status == "deployed" || h.Status == "superseded") && !plan.WrittenByRudder(h) {
			rev = h
			break
		}
	}
	if rev == nil {
		return nil
	}
	c := &metav1.Condition{Type: status.ConditionOutOfBand, Status: metav1.ConditionTrue}
	d := o.facts.Deployed
	switch {
	case d == nil || d.UID != rev.UID:
		c.Status, c.Reason = metav1.ConditionFalse, status.ReasonOutOfBandReplaced
		c.Message = fmt.Sprintf("Revision %d was written by another Helm client", rev.Number)
		if d != nil {
			c.Message += fmt.Sprintf("; revision %d serves now", d.Number)
		}
	case plan.KeepsOutOfBand(o.facts):
		c.Reason = status.ReasonOutOfBandKept
		c.Message = outOfBandMessage(o) + "; kept serving, as outOfBand: keep asks, until the spec or the chart changes. " +
			"Edit the spec to have rudder deploy it again"
	default:
		c.Reason = status.ReasonOutOfBandReverting
		c.Message = outOfBandMessage(o) + "; rudder upgrades the release back to the spec"
		if o.facts.OutOfBand == watches.OutOfBandKeep {
			c.Message = outOfBandMessage(o) + "; the spec or the chart changed since, so rudder upgrades the release to it"
		}
	}
	return c
}

// outOfBandMessage says which revision another Helm client deployed, and how.
func outOfBandMessage(o *observation) string {
	msg := fmt.Sprintf("Revision %d was written by another Helm client, not rudder", o.facts.Deployed.Number)
	if o.deployed != nil && o.deployed.Description != "" {
		msg += fmt.Sprintf(" (%q)", o.deployed.Description)
	}
	return msg
}

// reportOutOfBand records an event the first time this process sees another
// Helm client's revision serving a release.
func (r *Reconciler) reportOutOfBand(ctx context.Context, o *observation) {
	d := o.facts.Deployed
	if d == nil || plan.WrittenByRudder(d) || !r.memory.firstNotice(o.key, d.UID) {
		return
	}
	c := outOfBandCondition(o)
	ctrl.LoggerFrom(ctx).Info("Release changed by another Helm client", "revision", d.Number, "policy", r.Watch.OutOfBand)
	r.Recorder.Eventf(o.obj, nil, corev1.EventTypeWarning, status.ReasonOutOfBand, "Detect", "%s", c.Message)
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
