package reconcile

import (
	"time"

	"github.com/rudder-operator/rudder/internal/reconcile/status"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rudder-operator/rudder/internal/reconcile/plan"
)

// failure is the last failed try for one pair of digests. Memory keeps one
// per custom resource, so that retries back off and stop after the kind's
// remediation.maxAttempts; a change of values or chart starts over.
type failure struct {
	want    plan.Digests
	count   int
	last    time.Time
	reason  string
	message string
}

// retryIn returns how long to wait before the next try: 10s, 20s, 40s, …
// after each failure, at most five minutes.
func (f failure) retryIn(now time.Time) time.Duration {
	if f.count == 0 {
		return 0
	}
	backoff := 10 * time.Second << (f.count - 1)
	if backoff > 5*time.Minute || backoff <= 0 {
		backoff = 5 * time.Minute
	}
	return max(0, f.last.Add(backoff).Sub(now))
}

// failure returns key's failures for want: none when those it holds are
// for other digests.
func (m *memory) failure(key types.NamespacedName, want plan.Digests) failure {
	fl := failure{want: want}
	m.lookup(key, func(e *entry) {
		if e.failure != nil && e.failure.want == want {
			fl = *e.failure
		}
	})
	return fl
}

// recordFailure counts one more failed try for key and want.
func (m *memory) recordFailure(key types.NamespacedName, want plan.Digests, reason, message string, now time.Time) failure {
	var fl failure
	m.update(key, func(e *entry) {
		if e.failure == nil || e.failure.want != want {
			e.failure = &failure{want: want}
		}
		e.failure.count++
		e.failure.last, e.failure.reason, e.failure.message = now, reason, message
		fl = *e.failure
	})
	return fl
}

// lastFailure returns the failure memory holds for key, whatever its
// digests.
func (m *memory) lastFailure(key types.NamespacedName) (failure, bool) {
	var fl *failure
	m.lookup(key, func(e *entry) { fl = e.failure })
	if fl == nil {
		return failure{}, false
	}
	return *fl, true
}

// restoreFailure puts back fl for key, read from the status a rudder before
// this one wrote, unless memory already has a failure for key.
func (m *memory) restoreFailure(key types.NamespacedName, fl failure) {
	m.update(key, func(e *entry) {
		if e.failure == nil {
			e.failure = &fl
		}
	})
}

// forgetFailure ends key's failures: its digests succeeded.
func (m *memory) forgetFailure(key types.NamespacedName) {
	m.lookup(key, func(e *entry) { e.failure = nil })
}

// status is fl as status.failures shows it.
func (fl failure) status() *status.FailureStatus {
	last := metav1.NewTime(fl.last)
	return &status.FailureStatus{Count: fl.count, Reason: fl.reason, Message: fl.message, Last: &last,
		ValuesDigest: fl.want.Values, ChartDigest: fl.want.Chart}
}

// failureOf reads status.failures of obj: the failures a rudder before this
// one counted; false when there are none.
func failureOf(obj *unstructured.Unstructured) (failure, bool) {
	m, ok, _ := unstructured.NestedMap(obj.Object, "status", "failures")
	if !ok {
		return failure{}, false
	}
	var st status.FailureStatus
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &st); err != nil || st.Count <= 0 {
		return failure{}, false
	}
	fl := failure{want: plan.Digests{Values: st.ValuesDigest, Chart: st.ChartDigest}, count: st.Count, reason: st.Reason, message: st.Message}
	if st.Last != nil {
		fl.last = st.Last.Time
	}
	return fl, true
}
