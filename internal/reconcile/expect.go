package reconcile

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/stored"
)

// expectationTTL bounds how long a reconcile waits for the storage cache to
// show its last action: past it, storage is trusted as it is.
const expectationTTL = 30 * time.Second

// expectation is what storage must show after our last action before a plan
// may trust the cache: a newest revision numbered at least revision, stored
// in a Secret other than before (the newest one before the action), and, when
// it is that revision, in the status the action ended with (not the pending
// status it began with). The cache of Helm's storage lags behind Helm's
// writes; without it a reconcile right after an install could install again.
type expectation struct {
	revision int
	status   string
	before   types.UID
	at       time.Time
}

// Expect records what storage must show for key after the action that just
// wrote written: it, or a newer revision, in a Secret other than before.
func (m *memory) Expect(key types.NamespacedName, written *helm.Release, before types.UID, now time.Time) {
	exp := expectation{revision: written.Revision, status: written.Status, before: before, at: now}
	m.update(key, func(e *entry) { e.expect = &exp })
}

// Unexpect drops key's expectation.
func (m *memory) Unexpect(key types.NamespacedName) {
	m.lookup(key, func(e *entry) { e.expect = nil })
}

// caughtUp reports whether history shows the expectation for key, and drops
// it when it does or when it expired.
func (m *memory) caughtUp(key types.NamespacedName, history []stored.Revision, now time.Time) bool {
	caughtUp := true
	m.lookup(key, func(e *entry) {
		exp := e.expect
		if exp == nil {
			return
		}
		met := len(history) > 0 && history[0].Number >= exp.revision && history[0].UID != exp.before &&
			(exp.status == "" || history[0].Number > exp.revision || history[0].Status == exp.status)
		if met || now.Sub(exp.at) > expectationTTL {
			e.expect = nil
			return
		}
		caughtUp = false
	})
	return caughtUp
}
