package reconcile

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/reconcile/status"
)

// history returns the release's stored revisions, newest first, at most the
// kind's maxHistory (Helm's storage is pruned to the same bound). A revision
// that cannot be read is left out rather than failing the reconcile.
func (r *Reconciler) history(ctx context.Context, o *observation) []status.HistoryEntry {
	n := min(len(o.History), r.Watch.MaxHistory)
	out := make([]status.HistoryEntry, 0, n)
	shown := status.ShownHistory(o.Resource)
	for _, rev := range o.History[:n] {
		var known *status.HistoryEntry
		if e, ok := shown[rev.Number]; ok {
			known = &e
		}
		e, err := r.memory.historyEntry(r.Helm, o.key, o.Release, rev, known)
		if err != nil {
			ctrl.LoggerFrom(ctx).V(1).Info("Cannot read a revision for status.history", "revision", rev.Number, "error", err.Error())
			continue
		}
		out = append(out, e)
	}
	return out
}
