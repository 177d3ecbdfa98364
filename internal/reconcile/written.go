package reconcile

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// write is our last status write of a custom resource: the resourceVersion
// it left, so that a stale cache is never mistaken for the truth, and when
// it was, so that a rollout's progress is written at a measured pace.
type write struct {
	rv string
	at time.Time
}

// wrote records a status write of key that left resourceVersion rv.
func (m *memory) wrote(key types.NamespacedName, rv string, at time.Time) {
	m.update(key, func(e *entry) { e.write = &write{rv: rv, at: at} })
}

// shows reports whether an object read at resourceVersion rv shows our last
// status write: true when we wrote nothing since start, or rv is that write's.
func (m *memory) shows(key types.NamespacedName, rv string) bool {
	shows := true
	m.lookup(key, func(e *entry) { shows = e.write == nil || e.write.rv == rv })
	return shows
}

// progressWait is how long a write of progress alone for key must wait:
// until progressInterval has passed since the last write; 0 when it has, or
// when nothing was written since start.
func (m *memory) progressWait(key types.NamespacedName, now time.Time) time.Duration {
	var wait time.Duration
	m.lookup(key, func(e *entry) {
		if e.write != nil {
			wait = max(0, progressInterval-now.Sub(e.write.at))
		}
	})
	return wait
}

// progressInterval is the least time between two status writes that change
// only a rollout's progress: the replica counts and the messages that tell
// them. A rollout of two replicas moves them five times or more, and each
// write is a write of the whole custom resource for the API server and a
// decode of it for every watcher: at 5 s, a change wave of 200 WebApps on a
// busy control plane wrote 4.1 statuses per WebApp. The Deployment's own
// status shows the live counts. Anything else a status says (a phase, a
// condition turning True or False, a new generation or revision) is written at
// once; so is the progress after the interval, by a reconcile requeued for it.
const progressInterval = 30 * time.Second
