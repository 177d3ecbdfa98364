package reconcile

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/helm"
)

// HistoryEntry is one revision of a release in status.history, the way
// `helm history` shows it.
type HistoryEntry struct {
	Revision     int          `json:"revision"`
	Updated      *metav1.Time `json:"updated,omitempty"`
	Status       string       `json:"status"`
	Chart        string       `json:"chart,omitempty"`
	ChartVersion string       `json:"chartVersion,omitempty"`
	AppVersion   string       `json:"appVersion,omitempty"`
	ValuesDigest string       `json:"valuesDigest,omitempty"`
	Description  string       `json:"description,omitempty"`
}

func entryOf(rel *helm.Release) HistoryEntry {
	e := HistoryEntry{Revision: rel.Revision, Status: rel.Status, Chart: rel.Chart, ChartVersion: rel.ChartVersion,
		AppVersion: rel.AppVersion, ValuesDigest: rel.Labels[LabelValuesDigest], Description: rel.Description}
	if !rel.Updated.IsZero() {
		t := metav1.NewTime(rel.Updated)
		e.Updated = &t
	}
	return e
}

// history returns the release's stored revisions, newest first, at most the
// kind's maxHistory (Helm's storage is pruned to the same bound). A revision
// that cannot be read is left out rather than failing the reconcile.
func (r *Reconciler) history(ctx context.Context, o *observation) []HistoryEntry {
	n := min(len(o.history), r.Watch.MaxHistory)
	out := make([]HistoryEntry, 0, n)
	for _, rev := range o.history[:n] {
		e, err := r.revisions.entry(r.Helm, o.release, rev)
		if err != nil {
			ctrl.LoggerFrom(ctx).V(1).Info("Cannot read a revision for status.history", "revision", rev.Number, "error", err.Error())
			continue
		}
		out = append(out, e)
	}
	return out
}
