package reconcile

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/storage"
	"github.com/rudder-operator/rudder/internal/watches"
)

// AnnotationTestRequestedAt set to a new value (a time, by convention) asks
// rudder to run the chart tests of the deployed revision now, as `helm test`
// does; status.lastHandledTestAt then echoes the value, and the Tested
// condition and status.history say how the run ended (`rudder test` sets it
// and waits for that).
const AnnotationTestRequestedAt = "rudder.dev/test-requested-at"

// ConditionTested says how the last run of the deployed revision's chart
// tests ended: True (TestSucceeded), False (TestFailed), Unknown (TestPending:
// the kind's test.enable runs them once the revision is Ready). Absent before
// any run.
const ConditionTested = "Tested"

// Reasons of the Tested condition, and of the events of a run.
const (
	ReasonTestSucceeded = "TestSucceeded"
	ReasonTestFailed    = "TestFailed"
	ReasonTestPending   = "TestPending"
	ReasonTestRunning   = "TestRunning" // a run is under way
	ReasonTestNotRun    = "TestNotRun"  // a request found no revision Helm can test
)

// Labels rudder writes on a revision whose tests ran: the result ("Passed"
// or "Failed") and when the run ended, in Unix seconds.
const (
	LabelTest     = "rudder.dev/test"
	LabelTestedAt = "rudder.dev/tested-at"
)

// Test results, as LabelTest and status.history show them.
const (
	TestPassed = "Passed"
	TestFailed = "Failed"
)

// runTests runs the deployed revision's tests when they are due: on request
// (an AnnotationTestRequestedAt value not handled yet), or once after a
// revision rudder made for the wanted spec is first Ready, when the kind's
// test.enable is set. Helm tests the newest revision, so a request while the
// newest one is not deployed is refused.
//
// A run waits on the chart's test pods for up to the kind's test.timeout, so
// it runs on its own goroutine, not on the worker: the reconcile that starts
// it returns at once (Tested Unknown, TestRunning), and the run's end
// reconciles the resource again, which records its result.
//
// Precondition: a deployed revision (maintain), assessed.
func (r *Reconciler) runTests(ctx context.Context, o *observation) error {
	if run, ok := r.tested.running(o.key); ok {
		if !run.done {
			o.testRunning = &run
			return nil
		}
		r.tested.stop(o.key)
		if run.uid == o.facts.deployed.UID {
			return r.recordTest(ctx, o, run)
		}
		ctrl.LoggerFrom(ctx).Info("Dropped the result of a chart test run: the revision it tested no longer serves",
			"revision", run.result.Revision)
	}
	token := o.obj.GetAnnotations()[AnnotationTestRequestedAt]
	requested := testRequested(o.obj)
	switch {
	case requested && r.tested.answered(o.key, token):
		o.testHandled = token // by a status write the cache does not show yet
		return nil
	case o.facts.latest.Number != o.facts.deployed.Number:
		if requested {
			refuseTest(o)
		}
		return nil
	case requested || o.awaitingTest && o.health != nil && o.health.ready:
		return r.startTest(ctx, o)
	}
	return nil
}

// awaitsTest reports whether the deployed revision is one the kind's
// test.enable tests and it has not been tested.
func awaitsTest(f facts) bool {
	return deploysWanted(f) && f.deployed.Labels[LabelTest] == ""
}

// deploysWanted reports whether the deployed revision is one rudder made for
// the wanted spec and chart.
func deploysWanted(f facts) bool {
	d := f.deployed
	return d != nil && writtenByRudder(d) && digestsOf(d) == f.want
}

// testRequested reports whether obj asks for a test run it has not had.
func testRequested(obj *unstructured.Unstructured) bool {
	token := obj.GetAnnotations()[AnnotationTestRequestedAt]
	handled, _, _ := unstructured.NestedString(obj.Object, "status", "lastHandledTestAt")
	return token != "" && token != handled
}

// failedTests reports whether a run that passed or not counts as a failed
// upgrade under the kind's test policy (test.enable without ignoreFailures).
func failedTests(passed bool, t watches.Test) bool {
	return !passed && t.Enable && !t.IgnoreFailures
}

// testsFailed reports whether the deployed revision, made by rudder for the
// wanted spec, failed its last test run and the kind counts that as a failed
// upgrade.
func testsFailed(f facts, t watches.Test) bool {
	return deploysWanted(f) && f.deployed.Labels[LabelTest] != "" && failedTests(f.deployed.Labels[LabelTest] == TestPassed, t)
}

// refuseTest handles a test request the deployed revision cannot answer:
// Helm tests the newest revision, which is not deployed.
func refuseTest(o *observation) {
	o.testHandled = o.obj.GetAnnotations()[AnnotationTestRequestedAt]
	o.testNotRun = fmt.Sprintf("Not tested: Helm tests the newest revision, and revision %d is %s, not deployed; "+
		"ask again once the release is deployed", o.facts.latest.Number, o.facts.latest.Status)
}

// startTest starts a run of the deployed revision's chart tests on a
// goroutine of its own; its end enqueues the resource (testsDone), whose
// next reconcile records the result (recordTest).
//
// Precondition: runTests found the tests due and none running.
func (r *Reconciler) startTest(ctx context.Context, o *observation) error {
	hc, err := r.helmFor(o)
	if err != nil {
		return err
	}
	run := &testRun{
		uid:     o.facts.deployed.UID,
		request: o.obj.GetAnnotations()[AnnotationTestRequestedAt],
		started: time.Now(),
	}
	r.tested.start(o.key, run)
	o.testRunning = &testRun{uid: run.uid, request: run.request, started: run.started}
	ctrl.LoggerFrom(ctx).V(1).Info("Started the chart tests", "revision", o.facts.deployed.Number, "timeout", r.Watch.Test.Timeout)
	name, key, timeout := o.release.Name, o.key, r.Watch.Test.Timeout
	go func() {
		result, err := hc.Test(name, timeout)
		if r.tested.finish(key, run, result, err) && r.testsDone != nil {
			obj := r.newObject()
			obj.SetNamespace(key.Namespace)
			obj.SetName(key.Name)
			r.testsDone <- event.GenericEvent{Object: obj}
		}
	}()
	return nil
}

// recordTest records how run of the deployed revision's chart tests ended:
// on the revision (LabelTest, LabelTestedAt), in the Tested condition and in
// an event.
//
// Precondition: run is done and tested the deployed revision.
func (r *Reconciler) recordTest(ctx context.Context, o *observation, run testRun) error {
	log := ctrl.LoggerFrom(ctx)
	if run.err != nil {
		return run.err // the controller's backoff tries again
	}
	res := run.result
	r.observeHelm("test", run.started, testError(res))
	hc, err := r.helmFor(o)
	if err != nil {
		return err
	}
	result := TestPassed
	if !res.Passed {
		result = TestFailed
	}
	labels := map[string]string{LabelTest: result, LabelTestedAt: strconv.FormatInt(res.Completed.Unix(), 10)}
	if _, err := hc.Label(o.release.Name, res.Revision, labels); err != nil {
		return err
	}
	msg := testMessage(res)
	o.testRun = &res
	o.testHandled = run.request
	r.tested.set(o.key, testedRun{uid: run.uid, labels: labels, message: msg, request: run.request})
	// A failed run of the revision made for the wanted spec is a failed
	// upgrade (status.failures, which a restarted rudder reads too); a run
	// that passes ends it.
	switch {
	case failedTests(res.Passed, r.Watch.Test) && deploysWanted(o.facts):
		o.facts.testFailed = true
		o.failure = r.failures.record(o.key, o.facts.want, ReasonTestFailed, msg, r.now())
	case res.Passed && o.failure.reason == ReasonTestFailed:
		r.failures.forget(o.key)
		o.failure = failure{}
	}
	if res.Passed {
		log.Info("Chart tests passed", "revision", res.Revision, "tests", len(res.Tests))
		r.Recorder.Eventf(o.obj, nil, corev1.EventTypeNormal, ReasonTestSucceeded, "Test", "%s", msg)
	} else {
		log.Info("Chart tests failed", "revision", res.Revision, "failure", res.Failure)
		r.Recorder.Eventf(o.obj, nil, corev1.EventTypeWarning, ReasonTestFailed, "Test", "%s", msg)
	}
	return nil
}

// testedRuns remember, per custom resource, the test run this process has
// under way or finished and not yet recorded (inFlight), and the last run it
// recorded (m), on a revision known by its storage Secret's UID: its labels,
// until storage shows them, so that a reconcile meanwhile does not test that
// revision again; and its message, which names each test, for the Tested
// condition while that revision serves.
type testedRuns struct {
	mu       sync.Mutex
	m        map[types.NamespacedName]testedRun
	inFlight map[types.NamespacedName]*testRun
}

// testRun is one run of a revision's chart tests on its own goroutine.
type testRun struct {
	uid     types.UID // the storage Secret of the revision tested
	request string    // the AnnotationTestRequestedAt value it answers
	started time.Time

	// Set once, under testedRuns.mu, when the run ends.
	done   bool
	result helm.TestRun
	err    error // Helm could not run the tests (not a failed test)
}

// start records run as key's run under way.
func (t *testedRuns) start(key types.NamespacedName, run *testRun) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.inFlight == nil {
		t.inFlight = map[types.NamespacedName]*testRun{}
	}
	t.inFlight[key] = run
}

// running returns a copy of key's run under way or finished and not
// recorded, and whether there is one.
func (t *testedRuns) running(key types.NamespacedName) (testRun, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	run, ok := t.inFlight[key]
	if !ok {
		return testRun{}, false
	}
	return *run, true
}

// finish records how run ended and reports whether it is still key's run:
// one forgotten meanwhile (the resource deleted) is dropped.
func (t *testedRuns) finish(key types.NamespacedName, run *testRun, result helm.TestRun, err error) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	run.done, run.result, run.err = true, result, err
	return t.inFlight[key] == run
}

// stop forgets key's run once it has finished.
func (t *testedRuns) stop(key types.NamespacedName) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if run, ok := t.inFlight[key]; ok && run.done {
		delete(t.inFlight, key)
	}
}

type testedRun struct {
	uid     types.UID
	labels  map[string]string
	message string
	request string // the AnnotationTestRequestedAt value it answered
}

func (t *testedRuns) set(key types.NamespacedName, run testedRun) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[types.NamespacedName]testedRun{}
	}
	t.m[key] = run
}

// answered reports whether the last run answered the request token: a
// status read from before that run's write does not show it yet.
func (t *testedRuns) answered(key types.NamespacedName, token string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	run, ok := t.m[key]
	return ok && token != "" && run.request == token
}

// overlay puts the labels of the last run on the revision of hist it was
// made on, while storage does not show them (on a copy of its labels: hist's
// may be the cache's), and returns the run's message. A run whose revision is
// gone is forgotten.
func (t *testedRuns) overlay(key types.NamespacedName, hist []storage.Revision) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	run, ok := t.m[key]
	if !ok {
		return ""
	}
	for i := range hist {
		if hist[i].UID != run.uid {
			continue
		}
		if hist[i].Labels[LabelTestedAt] != run.labels[LabelTestedAt] {
			labels := maps.Clone(hist[i].Labels)
			maps.Copy(labels, run.labels)
			hist[i].Labels = labels
		}
		return run.message
	}
	delete(t.m, key)
	return ""
}

func (t *testedRuns) forget(key types.NamespacedName) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, key)
	delete(t.inFlight, key)
}

func (t *testedRuns) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m) + len(t.inFlight)
}

// testError is the error of a failed run, for the Helm action metrics.
func testError(run helm.TestRun) error {
	if run.Passed {
		return nil
	}
	return fmt.Errorf("%s", run.Failure)
}

// testMessage says how run ended, naming the tests.
func testMessage(run helm.TestRun) string {
	tests := "no tests: the chart has no helm.sh/hook: test templates"
	if len(run.Tests) > 0 {
		tests = strings.Join(run.Tests, ", ")
	}
	took := run.Completed.Sub(run.Started).Round(100 * time.Millisecond)
	if run.Passed {
		return fmt.Sprintf("Revision %d passed its tests in %s (%s)", run.Revision, took, tests)
	}
	return truncate(fmt.Sprintf("Revision %d failed its tests after %s: %s (%s)", run.Revision, took, run.Failure, tests), 1000)
}

// testedCondition is the Tested condition: from this reconcile's run, else
// from the deployed revision's test labels; Unknown while the kind's
// test.enable waits for the deployed revision to be Ready; else nil: the
// previous one stays, naming the revision it is about. It never depends on
// the status as read alone, which the cache may show from before a run.
func testedCondition(o *observation) *metav1.Condition {
	if run := o.testRun; run != nil {
		c := metav1.Condition{Type: ConditionTested, Status: metav1.ConditionTrue, Reason: ReasonTestSucceeded, Message: testMessage(*run)}
		if !run.Passed {
			c.Status, c.Reason = metav1.ConditionFalse, ReasonTestFailed
		}
		return &c
	}
	if run := o.testRunning; run != nil {
		return &metav1.Condition{Type: ConditionTested, Status: metav1.ConditionUnknown, Reason: ReasonTestRunning,
			Message: fmt.Sprintf("Revision %d's tests are running, since %s", o.facts.deployed.Number, run.started.UTC().Format(time.RFC3339))}
	}
	if o.testNotRun != "" {
		return &metav1.Condition{Type: ConditionTested, Status: metav1.ConditionFalse, Reason: ReasonTestNotRun, Message: o.testNotRun}
	}
	if d := o.facts.deployed; d != nil && d.Labels[LabelTest] == TestPassed {
		return &metav1.Condition{Type: ConditionTested, Status: metav1.ConditionTrue, Reason: ReasonTestSucceeded,
			Message: lastTested(o, ReasonTestSucceeded, d.Number, fmt.Sprintf("Revision %d passed its tests", d.Number))}
	}
	if d := o.facts.deployed; d != nil && d.Labels[LabelTest] == TestFailed {
		return &metav1.Condition{Type: ConditionTested, Status: metav1.ConditionFalse, Reason: ReasonTestFailed, Message: testFailure(o)}
	}
	if o.awaitingTest {
		return &metav1.Condition{Type: ConditionTested, Status: metav1.ConditionUnknown, Reason: ReasonTestPending,
			Message: fmt.Sprintf("Revision %d is tested once it is Ready (test.enable)", o.facts.deployed.Number)}
	}
	return nil
}

// testFailure says how the deployed revision failed its tests: the failure
// recorded for the wanted spec, else the Tested condition about it.
func testFailure(o *observation) string {
	n := o.facts.deployed.Number
	if o.failure.reason == ReasonTestFailed && strings.HasPrefix(o.failure.message, fmt.Sprintf("Revision %d failed", n)) {
		return o.failure.message
	}
	return lastTested(o, ReasonTestFailed, n, fmt.Sprintf("Revision %d failed its tests", n))
}

// lastTested returns the message of the last run of revision n that ended
// with reason: this process's, else the Tested condition's as read, else
// fallback.
func lastTested(o *observation, reason string, n int, fallback string) string {
	about := fmt.Sprintf("Revision %d ", n)
	if strings.HasPrefix(o.lastTest, about) && (reason == ReasonTestSucceeded) == strings.HasPrefix(o.lastTest, about+"passed") {
		return o.lastTest
	}
	conds, _, _ := unstructured.NestedSlice(o.obj.Object, "status", "conditions")
	for _, raw := range conds {
		m, ok := raw.(map[string]any)
		if !ok || m["type"] != ConditionTested || m["reason"] != reason {
			continue
		}
		if msg := fmt.Sprint(m["message"]); strings.HasPrefix(msg, about) {
			return msg
		}
	}
	return fallback
}

// testOf is the status.history entry's test of rev, from its labels.
func testOf(rev storage.Revision) *HistoryTest {
	result := rev.Labels[LabelTest]
	if result == "" {
		return nil
	}
	t := &HistoryTest{Result: result}
	if at, err := strconv.ParseInt(rev.Labels[LabelTestedAt], 10, 64); err == nil {
		c := metav1.NewTime(time.Unix(at, 0))
		t.Completed = &c
	}
	return t
}

// HistoryTest is the last run of a revision's chart tests in status.history.
type HistoryTest struct {
	Result    string       `json:"result"`
	Completed *metav1.Time `json:"completed,omitempty"`
}
