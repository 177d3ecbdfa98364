package reconcile

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
)

// failure returns key's failures for want: none when those it holds are
// for other digests.
func (m *memory) failure(key types.NamespacedName, want plan.Digests) status.Failure {
	fl := status.Failure{Want: want}
	m.lookup(key, func(e *entry) {
		if e.failure != nil && e.failure.Want == want {
			fl = *e.failure
		}
	})
	return fl
}

// RecordFailure counts one more failed try for key and want.
func (m *memory) RecordFailure(key types.NamespacedName, want plan.Digests, reason, message string, now time.Time) status.Failure {
	var fl status.Failure
	m.update(key, func(e *entry) {
		if e.failure == nil || e.failure.Want != want {
			e.failure = &status.Failure{Want: want}
		}
		e.failure.Count++
		e.failure.Last, e.failure.Reason, e.failure.Message = now, reason, message
		fl = *e.failure
	})
	return fl
}

// lastFailure returns the failure memory holds for key, whatever its
// digests.
func (m *memory) lastFailure(key types.NamespacedName) (status.Failure, bool) {
	var fl *status.Failure
	m.lookup(key, func(e *entry) { fl = e.failure })
	if fl == nil {
		return status.Failure{}, false
	}
	return *fl, true
}

// restoreFailure puts back fl for key, read from the status a rudder before
// this one wrote, unless memory already has a failure for key.
func (m *memory) restoreFailure(key types.NamespacedName, fl status.Failure) {
	m.update(key, func(e *entry) {
		if e.failure == nil {
			e.failure = &fl
		}
	})
}

// ForgetFailure ends key's failures: its digests succeeded.
func (m *memory) ForgetFailure(key types.NamespacedName) {
	m.lookup(key, func(e *entry) { e.failure = nil })
}
