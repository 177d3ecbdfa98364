package reconcile

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rudder-operator/rudder/internal/storage"
)

// expectationTTL bounds how long a reconcile waits for the storage cache to
// show its last action: past it, storage is trusted as it is.
const expectationTTL = 30 * time.Second

// expectation is what storage must show after our last action before a plan
// may trust the cache: a newest revision numbered at least revision, stored
// in a Secret other than before (the newest one before the action), and, when
// it is that revision, in the status the action ended with (not the pending
// status it began with).
type expectation struct {
	revision int
	status   string
	before   types.UID
	at       time.Time
}

// expectations keep one expectation per custom resource. The cache of Helm's
// storage lags behind Helm's writes; without them a reconcile right after an
// install could install again.
type expectations struct {
	mu sync.Mutex
	m  map[types.NamespacedName]expectation
}

func (e *expectations) set(key types.NamespacedName, exp expectation) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		e.m = map[types.NamespacedName]expectation{}
	}
	e.m[key] = exp
}

func (e *expectations) forget(key types.NamespacedName) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, key)
}

// caughtUp reports whether history shows the expectation for key, and drops
// it when it does or when it expired.
func (e *expectations) caughtUp(key types.NamespacedName, history []storage.Revision, now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	exp, ok := e.m[key]
	if !ok {
		return true
	}
	met := len(history) > 0 && history[0].Number >= exp.revision && history[0].UID != exp.before &&
		(exp.status == "" || history[0].Number > exp.revision || history[0].Status == exp.status)
	if met || now.Sub(exp.at) > expectationTTL {
		delete(e.m, key)
		return true
	}
	return false
}

// failure is the last failed try for one pair of digests.
type failure struct {
	want    digests
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

// failures remember the failed tries of each custom resource, so that retries
// back off and stop after the kind's remediation.maxAttempts. A change of values or chart starts over.
type failures struct {
	mu sync.Mutex
	m  map[types.NamespacedName]failure
}

func (f *failures) get(key types.NamespacedName, want digests) failure {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fl, ok := f.m[key]; ok && fl.want == want {
		return fl
	}
	return failure{want: want}
}

func (f *failures) record(key types.NamespacedName, want digests, reason, message string, now time.Time) failure {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[types.NamespacedName]failure{}
	}
	fl := f.m[key]
	if fl.want != want {
		fl = failure{want: want}
	}
	fl.count++
	fl.last, fl.reason, fl.message = now, reason, message
	f.m[key] = fl
	return fl
}

// current returns the failure memory holds for key, whatever its digests.
func (f *failures) current(key types.NamespacedName) (failure, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fl, ok := f.m[key]
	return fl, ok
}

// restore puts back fl for key, read from the status a rudder before this
// one wrote, unless memory already has a failure for key.
func (f *failures) restore(key types.NamespacedName, fl failure) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[types.NamespacedName]failure{}
	}
	if _, ok := f.m[key]; !ok {
		f.m[key] = fl
	}
}

// status is fl as status.failures shows it.
func (fl failure) status() *FailureStatus {
	last := metav1.NewTime(fl.last)
	return &FailureStatus{Count: fl.count, Reason: fl.reason, Message: fl.message, Last: &last,
		ValuesDigest: fl.want.values, ChartDigest: fl.want.chart}
}

// failureOf reads status.failures of obj: the failures a rudder before this
// one counted; false when there are none.
func failureOf(obj *unstructured.Unstructured) (failure, bool) {
	m, ok, _ := unstructured.NestedMap(obj.Object, "status", "failures")
	if !ok {
		return failure{}, false
	}
	var st FailureStatus
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &st); err != nil || st.Count <= 0 {
		return failure{}, false
	}
	fl := failure{want: digests{values: st.ValuesDigest, chart: st.ChartDigest}, count: st.Count, reason: st.Reason, message: st.Message}
	if st.Last != nil {
		fl.last = st.Last.Time
	}
	return fl, true
}

func (f *failures) forget(key types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.m, key)
}

// writes remember the resourceVersion each custom resource had after our last
// status write, so that a stale cache is never mistaken for the truth, and
// when that write was, so that a rollout's progress is written at a measured
// pace.
type writes struct {
	mu sync.Mutex
	m  map[types.NamespacedName]write
}

type write struct {
	rv string
	at time.Time
}

func (w *writes) set(key types.NamespacedName, rv string, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[types.NamespacedName]write{}
	}
	w.m[key] = write{rv: rv, at: at}
}

// shows reports whether an object read at resourceVersion rv shows our last
// status write: true when we wrote nothing since start, or rv is that write's.
func (w *writes) shows(key types.NamespacedName, rv string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.m[key]
	return !ok || last.rv == rv
}

// wait is how long a write of progress alone for key must wait: until
// progressInterval has passed since the last write; 0 when it has, or when
// nothing was written since start.
func (w *writes) wait(key types.NamespacedName, now time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.m[key]
	if !ok {
		return 0
	}
	return max(0, progressInterval-now.Sub(last.at))
}

func (w *writes) forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, key)
}

// forget drops everything kept in memory for the custom resource key and its
// release: called whenever a resource is gone or no longer rudder's (uninstalled,
// not found, out of the selector), so that memory follows the live resources.
func (r *Reconciler) forget(key types.NamespacedName) {
	r.expect.forget(key)
	r.written.forget(key)
	r.failures.forget(key)
	r.noticed.forget(key)
	r.states.forget(key)
	r.tested.forget(key)
	r.revisions.prune(types.NamespacedName{Namespace: key.Namespace, Name: r.Watch.ReleaseName(key.Name)}, nil)
}

// entries counts what memory holds per custom resource and release, across
// every map: the rudder_reconciler_entries gauge.
func (r *Reconciler) entries() int {
	return r.expect.len() + r.written.len() + r.failures.len() + r.noticed.len() + r.states.len() + r.revisions.len() + r.tested.len()
}

func (e *expectations) len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.m)
}

func (f *failures) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.m)
}

func (w *writes) len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.m)
}

func (n *noticed) len() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.m)
}

func (c *revisions) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m) + len(c.entries) + len(c.written)
}
