package status

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/rudder-operator/rudder/internal/reconcile/plan"
)

// Failure is the last failed try for one pair of digests. Memory keeps one
// per custom resource, so that retries back off and stop after the kind's
// remediation.maxAttempts; a change of values or chart starts over.
type Failure struct {
	Want    plan.Digests
	Count   int
	Last    time.Time
	Reason  string
	Message string
}

// RetryIn returns how long to wait before the next try: 10s, 20s, 40s, …
// after each failure, at most five minutes.
func (f Failure) RetryIn(now time.Time) time.Duration {
	if f.Count == 0 {
		return 0
	}
	backoff := 10 * time.Second << (f.Count - 1)
	if backoff > 5*time.Minute || backoff <= 0 {
		backoff = 5 * time.Minute
	}
	return max(0, f.Last.Add(backoff).Sub(now))
}

// Status is fl as status.failures shows it.
func (fl Failure) Status() *FailureStatus {
	last := metav1.NewTime(fl.Last)
	return &FailureStatus{Count: fl.Count, Reason: fl.Reason, Message: fl.Message, Last: &last,
		ValuesDigest: fl.Want.Values, ChartDigest: fl.Want.Chart}
}

// FailureOf reads status.failures of obj: the failures a rudder before this
// one counted; false when there are none.
func FailureOf(obj *unstructured.Unstructured) (Failure, bool) {
	m, ok, _ := unstructured.NestedMap(obj.Object, "status", "failures")
	if !ok {
		return Failure{}, false
	}
	var st FailureStatus
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &st); err != nil || st.Count <= 0 {
		return Failure{}, false
	}
	fl := Failure{Want: plan.Digests{Values: st.ValuesDigest, Chart: st.ChartDigest}, Count: st.Count, Reason: st.Reason, Message: st.Message}
	if st.Last != nil {
		fl.Last = st.Last.Time
	}
	return fl, true
}
