package reconcile

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/reconcile/charttest"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/redact"
	"github.com/rudder-operator/rudder/internal/rollout"
)

// memory is what this process remembers of each custom resource between
// its reconciles, one entry per resource under one lock. None of it is the
// truth, which the API server holds: it saves reads and decodes, paces
// writes, and bridges the moment before a cache shows a write. A restart
// loses it and nothing breaks. Forget drops a resource's entry whole.
type memory struct {
	mu sync.Mutex
	m  map[types.NamespacedName]*entry
	// noCache keeps every entry's cache empty (Reconciler.NoCaches).
	noCache bool
	// members counts the changes of the entries' member, and of the set
	// of entries (rollout.go): the kind's rollout counts again only then.
	members uint64
}

// entry is what memory keeps of one custom resource and its release. Each
// field belongs to the file that reads it. The first are what a reconcile
// needs to be right: what it waits for, counts, paces, reports once and
// keeps out of its messages. The cache is only an optimisation.
type entry struct {
	expect  *expectation        // what storage must show after our last Helm action (expect.go)
	failure *status.Failure     // the failed tries for one pair of digests (failures.go)
	write   *write              // our last status write (written.go)
	noticed types.UID           // the out-of-band revision last reported (outofband.go)
	state   *resourceState      // the release state and readiness the metrics export (metrics.go)
	tested  *charttest.Recorded // the last chart test run recorded (test.go)
	testing *charttest.Run      // the chart test run under way or not yet recorded (test.go)
	secrets *redact.Redactor    // the values this reconcile took from Secrets, kept out of its messages (redact.go)
	member  *rollout.Member     // how the kind's rollout counts the resource (rollout.go)

	cache revisionCache
}

// revisionCache is what this process decoded or summed up of the release's
// revisions, by storage Secret, so that a reconcile reads and decodes them
// again only when their Secret changed (revisions.go). It is only a cache:
// empty, every reconcile reads what it needs from storage, as it does when
// the manager runs with its caches off.
type revisionCache struct {
	decoded  byUID[decoded]             // the revisions a reconcile reads, decoded, with what assess last found
	entries  byUID[status.HistoryEntry] // the others' status.history entries
	written  *helm.Release              // the revision rudder wrote last, until storage shows it
	verdicts byUID[verdict]             // what reading each revision whose labels carry no valid signature told
}

// update runs fn on key's entry under the lock, creating the entry.
func (m *memory) update(key types.NamespacedName, fn func(*entry)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[key]
	if !ok {
		if m.m == nil {
			m.m = map[types.NamespacedName]*entry{}
		}
		e = &entry{}
		m.m[key] = e
	}
	fn(e)
}

// lookup runs fn on key's entry under the lock, when there is one, and
// reports whether there was.
func (m *memory) lookup(key types.NamespacedName, fn func(*entry)) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[key]
	if ok {
		fn(e)
	}
	return ok
}

// Forget drops everything remembered of the custom resource key and its
// release: called whenever a resource is gone or no longer rudder's
// (uninstalled, not found, out of the selector), so that memory follows the
// live resources.
func (m *memory) Forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.m[key]; ok {
		m.members++
	}
	delete(m.m, key)
}

// len is the number of resources remembered: the rudder_reconciler_entries
// gauge.
func (m *memory) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m)
}
