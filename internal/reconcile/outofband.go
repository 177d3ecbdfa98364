package reconcile

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/storage"
	"github.com/rudder-operator/rudder/internal/watches"
)

// writtenByRudder reports whether rudder wrote rev: its LabelRevision is its
// own number. helm upgrade and helm rollback copy an older revision's labels,
// LabelRevision included, so theirs carry another number. A rollback rudder
// made carries its own number in LabelRollbackAs from the start, which
// counts too: rudder may have stopped before it relabeled the revision.
func writtenByRudder(rev *storage.Revision) bool {
	own := strconv.Itoa(rev.Number)
	return rev.Labels[LabelRevision] == own || rev.Labels[LabelRollbackAs] == own
}

// newestByRudder returns the newest revision of history rudder wrote.
func newestByRudder(history []storage.Revision) *storage.Revision {
	for i := range history {
		if writtenByRudder(&history[i]) {
			return &history[i]
		}
	}
	return nil
}

// keepsOutOfBand reports whether the deployed revision, written by another
// Helm client, stays: the kind says outOfBand: keep and the spec and chart
// are those rudder last deployed. With no revision of rudder's left to
// compare with, rudder upgrades to the spec.
func keepsOutOfBand(f facts) bool {
	return !writtenByRudder(f.deployed) && f.outOfBand == watches.OutOfBandKeep &&
		f.ours != nil && digestsOf(f.ours) == f.want
}

// nextRevision is the number Helm gives the next revision of o's release.
func nextRevision(o *observation) int {
	if o.facts.latest == nil {
		return 1
	}
	return o.facts.latest.Number + 1
}

// mark makes sure rel, just written by rudder, carries its own number as
// LabelRevision: nextRevision guessed it, and another writer may have
// stored a revision in between.
func (r *Reconciler) mark(ctx context.Context, hc *helm.Client, rel *helm.Release) *helm.Release {
	n := strconv.Itoa(rel.Revision)
	if rel.Labels[LabelRevision] == n {
		return rel
	}
	marked, err := hc.Label(rel.Name, rel.Revision, map[string]string{LabelRevision: n})
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
		if (h.Status == "deployed" || h.Status == "superseded") && !writtenByRudder(h) {
			rev = h
			break
		}
	}
	if rev == nil {
		return nil
	}
	c := &metav1.Condition{Type: ConditionOutOfBand, Status: metav1.ConditionTrue}
	d := o.facts.deployed
	switch {
	case d == nil || d.UID != rev.UID:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonOutOfBandReplaced
		c.Message = fmt.Sprintf("Revision %d was written by another Helm client", rev.Number)
		if d != nil {
			c.Message += fmt.Sprintf("; revision %d serves now", d.Number)
		}
	case keepsOutOfBand(o.facts):
		c.Reason = ReasonOutOfBandKept
		c.Message = outOfBandMessage(o) + "; kept serving, as outOfBand: keep asks, until the spec or the chart changes. " +
			"Edit the spec to have rudder deploy it again"
	default:
		c.Reason = ReasonOutOfBandReverting
		c.Message = outOfBandMessage(o) + "; rudder upgrades the release back to the spec"
		if o.facts.outOfBand == watches.OutOfBandKeep {
			c.Message = outOfBandMessage(o) + "; the spec or the chart changed since, so rudder upgrades the release to it"
		}
	}
	return c
}

// outOfBandMessage says which revision another Helm client deployed, and how.
func outOfBandMessage(o *observation) string {
	msg := fmt.Sprintf("Revision %d was written by another Helm client, not rudder", o.facts.deployed.Number)
	if o.deployed != nil && o.deployed.Description != "" {
		msg += fmt.Sprintf(" (%q)", o.deployed.Description)
	}
	return msg
}

// reportOutOfBand records an event the first time this process sees another
// Helm client's revision serving a release.
func (r *Reconciler) reportOutOfBand(ctx context.Context, o *observation) {
	d := o.facts.deployed
	if d == nil || writtenByRudder(d) || !r.noticed.first(o.key, d.UID) {
		return
	}
	c := outOfBandCondition(o)
	ctrl.LoggerFrom(ctx).Info("Release changed by another Helm client", "revision", d.Number, "policy", r.Watch.OutOfBand)
	r.Recorder.Eventf(o.obj, nil, corev1.EventTypeWarning, ReasonOutOfBand, "Detect", "%s", c.Message)
}

// noticed remembers, per custom resource, the last revision of another Helm
// client reported, so that it is reported once.
type noticed struct {
	mu sync.Mutex
	m  map[types.NamespacedName]types.UID
}

func (n *noticed) first(key types.NamespacedName, uid types.UID) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.m == nil {
		n.m = map[types.NamespacedName]types.UID{}
	}
	if n.m[key] == uid {
		return false
	}
	n.m[key] = uid
	return true
}

func (n *noticed) forget(key types.NamespacedName) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.m, key)
}
