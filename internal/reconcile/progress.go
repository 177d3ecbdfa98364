package reconcile

import (
	"maps"
	"time"

	"github.com/rudder-operator/rudder/internal/reconcile/status"

	"k8s.io/apimachinery/pkg/api/equality"
)

// progressInterval is the least time between two status writes that change
// only a rollout's progress: the replica counts and the messages that tell
// them. A rollout of two replicas moves them five times or more, and each
// write is a write of the whole custom resource for the API server and a
// decode of it for every watcher. Anything else a status says (a phase, a
// condition turning True or False, a new generation or revision) is written at
// once; so is the progress after the interval, by a reconcile requeued for it.
const progressInterval = 5 * time.Second

// progressOnly reports whether next, the status about to be written, differs
// from current, the status as read, only in a rollout's progress.
func progressOnly(current, next map[string]any) bool {
	return current != nil && equality.Semantic.DeepEqual(withoutProgress(current), withoutProgress(next))
}

// withoutProgress returns st without the keys a rollout's progress moves:
// the replica counts, the message, and the Ready condition's message.
func withoutProgress(st map[string]any) map[string]any {
	out := maps.Clone(st)
	delete(out, "replicas")
	delete(out, "readyReplicas")
	delete(out, "message")
	conds, ok := st["conditions"].([]any)
	if !ok {
		return out
	}
	kept := make([]any, len(conds))
	for i, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == status.ConditionReady {
			m = maps.Clone(m)
			delete(m, "message")
			c = m
		}
		kept[i] = c
	}
	out["conditions"] = kept
	return out
}
