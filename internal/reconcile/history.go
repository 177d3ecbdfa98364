package reconcile

import (
	"context"
	"strconv"

	"github.com/rudder-operator/rudder/internal/reconcile/status"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/storage"
)

func entryOf(rel *helm.Release) status.HistoryEntry {
	e := status.HistoryEntry{Revision: rel.Revision, Status: rel.Status, Chart: rel.Chart, ChartVersion: rel.ChartVersion,
		AppVersion: rel.AppVersion, ValuesDigest: rel.Labels[storage.LabelValuesDigest], Description: rel.Description}
	if !rel.Updated.IsZero() {
		t := metav1.NewTime(rel.Updated)
		e.Updated = &t
	}
	return e
}

// history returns the release's stored revisions, newest first, at most the
// kind's maxHistory (Helm's storage is pruned to the same bound). A revision
// that cannot be read is left out rather than failing the reconcile.
func (r *Reconciler) history(ctx context.Context, o *observation) []status.HistoryEntry {
	n := min(len(o.history), r.Watch.MaxHistory)
	out := make([]status.HistoryEntry, 0, n)
	shown := shownHistory(o.obj)
	for _, rev := range o.history[:n] {
		var known *status.HistoryEntry
		if e, ok := shown[rev.Number]; ok {
			known = &e
		}
		e, err := r.memory.historyEntry(r.Helm, o.key, o.release, rev, known)
		if err != nil {
			ctrl.LoggerFrom(ctx).V(1).Info("Cannot read a revision for status.history", "revision", rev.Number, "error", err.Error())
			continue
		}
		out = append(out, e)
	}
	return out
}

// shownHistory returns the entries of the custom resource's status.history
// by revision number.
func shownHistory(obj *unstructured.Unstructured) map[int]status.HistoryEntry {
	items, found, _ := unstructured.NestedSlice(obj.Object, "status", "history")
	if !found {
		return nil
	}
	out := make(map[int]status.HistoryEntry, len(items))
	for _, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		var e status.HistoryEntry
		if runtime.DefaultUnstructuredConverter.FromUnstructured(m, &e) == nil && e.Revision > 0 {
			out[e.Revision] = e
		}
	}
	return out
}

// recordedFor reports whether e, an entry status.history shows, was made from
// the stored revision rev rather than from an earlier revision of the same
// number (one uninstalled since): same number and values digest, and Helm
// deployed e within a minute after rudder started writing rev. After a
// restart such entries spare decoding every stored revision again; revisions
// without the label (another client's, or rudder's rollbacks, which carry the
// label of the revision they copy) are decoded.
func recordedFor(e status.HistoryEntry, rev storage.Revision) bool {
	written, err := strconv.ParseInt(rev.Labels[storage.LabelWrittenAt], 10, 64)
	if err != nil || e.Updated == nil || e.Revision != rev.Number || e.ValuesDigest != rev.Labels[storage.LabelValuesDigest] {
		return false
	}
	lag := e.Updated.Unix() - written
	return lag >= 0 && lag <= 60
}
