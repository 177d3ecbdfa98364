package reconcile

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/rudder-operator/rudder/internal/reconcile/status"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/storage"
	"github.com/rudder-operator/rudder/internal/watches"
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
	if run, ok := r.memory.testRunning(o.key); ok {
		if !run.done {
			o.testRunning = &run
			return nil
		}
		r.memory.testStopped(o.key)
		if run.uid == o.facts.Deployed.UID {
			return r.recordTest(ctx, o, run)
		}
		ctrl.LoggerFrom(ctx).Info("Dropped the result of a chart test run: the revision it tested no longer serves",
			"revision", run.result.Revision)
	}
	token := o.obj.GetAnnotations()[status.AnnotationTestRequestedAt]
	requested := testRequested(o.obj)
	switch {
	case requested && r.memory.testAnswered(o.key, token):
		o.testHandled = token // by a status write the cache does not show yet
		return nil
	case o.facts.Latest.Number != o.facts.Deployed.Number:
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
func awaitsTest(f plan.Facts) bool {
	return deploysWanted(f) && f.Deployed.Labels[storage.LabelTest] == ""
}

// deploysWanted reports whether the deployed revision is one rudder made for
// the wanted spec and chart.
func deploysWanted(f plan.Facts) bool {
	d := f.Deployed
	return d != nil && plan.WrittenByRudder(d) && plan.DigestsOf(d) == f.Want
}

// testRequested reports whether obj asks for a test run it has not had.
func testRequested(obj *unstructured.Unstructured) bool {
	token := obj.GetAnnotations()[status.AnnotationTestRequestedAt]
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
func testsFailed(f plan.Facts, t watches.Test) bool {
	return deploysWanted(f) && f.Deployed.Labels[storage.LabelTest] != "" && failedTests(f.Deployed.Labels[storage.LabelTest] == status.TestPassed, t)
}

// refuseTest handles a test request the deployed revision cannot answer:
// Helm tests the newest revision, which is not deployed.
func refuseTest(o *observation) {
	o.testHandled = o.obj.GetAnnotations()[status.AnnotationTestRequestedAt]
	o.testNotRun = fmt.Sprintf("Not tested: Helm tests the newest revision, and revision %d is %s, not deployed; "+
		"ask again once the release is deployed", o.facts.Latest.Number, o.facts.Latest.Status)
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
		uid:     o.facts.Deployed.UID,
		request: o.obj.GetAnnotations()[status.AnnotationTestRequestedAt],
		started: time.Now(),
	}
	r.memory.testStarted(o.key, run)
	o.testRunning = &testRun{uid: run.uid, request: run.request, started: run.started}
	ctrl.LoggerFrom(ctx).V(1).Info("Started the chart tests", "revision", o.facts.Deployed.Number, "timeout", r.Watch.Test.Timeout)
	name, key, timeout := o.release.Name, o.key, r.Watch.Test.Timeout
	go func() {
		result, err := hc.Test(name, timeout)
		if r.memory.testFinished(key, run, result, err) && r.testsDone != nil {
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
	result := status.TestPassed
	if !res.Passed {
		result = status.TestFailed
	}
	labels := map[string]string{storage.LabelTest: result, storage.LabelTestedAt: strconv.FormatInt(res.Completed.Unix(), 10)}
	if _, err := hc.Label(o.release.Name, res.Revision, labels); err != nil {
		return err
	}
	msg := testMessage(res)
	o.testRun = &res
	o.testHandled = run.request
	r.memory.testRecorded(o.key, testedRun{uid: run.uid, labels: labels, message: msg, request: run.request})
	// A failed run of the revision made for the wanted spec is a failed
	// upgrade (status.failures, which a restarted rudder reads too); a run
	// that passes ends it.
	switch {
	case failedTests(res.Passed, r.Watch.Test) && deploysWanted(o.facts):
		o.facts.TestFailed = true
		o.failure = r.memory.recordFailure(o.key, o.facts.Want, status.ReasonTestFailed, msg, r.now())
	case res.Passed && o.failure.reason == status.ReasonTestFailed:
		r.memory.forgetFailure(o.key)
		o.failure = failure{}
	}
	if res.Passed {
		log.Info("Chart tests passed", "revision", res.Revision, "tests", len(res.Tests))
		r.Recorder.Eventf(o.obj, nil, corev1.EventTypeNormal, status.ReasonTestSucceeded, "Test", "%s", msg)
	} else {
		log.Info("Chart tests failed", "revision", res.Revision, "failure", res.Failure)
		r.Recorder.Eventf(o.obj, nil, corev1.EventTypeWarning, status.ReasonTestFailed, "Test", "%s", msg)
	}
	return nil
}

// testRun is one run of a revision's chart tests on its own goroutine.
type testRun struct {
	uid     types.UID // the storage Secret of the revision tested
	request string    // the AnnotationTestRequestedAt value it answers
	started time.Time

	// Set once, under memory's lock, when the run ends.
	done   bool
	result helm.TestRun
	err    error // Helm could not run the tests (not a failed test)
}

// testedRun is the last run of a release's tests whose result was recorded
// on its revision: until storage shows those labels, memory does.
type testedRun struct {
	uid     types.UID
	labels  map[string]string
	message string
	request string // the AnnotationTestRequestedAt value it answered
}

// testStarted records run as key's run under way.
func (m *memory) testStarted(key types.NamespacedName, run *testRun) {
	m.update(key, func(e *entry) { e.testing = run })
}

// testRunning returns a copy of key's run under way or finished and not
// recorded, and whether there is one.
func (m *memory) testRunning(key types.NamespacedName) (testRun, bool) {
	var run testRun
	var ok bool
	m.lookup(key, func(e *entry) {
		if e.testing != nil {
			run, ok = *e.testing, true
		}
	})
	return run, ok
}

// testFinished records how run ended and reports whether it is still key's
// run: one forgotten meanwhile (the resource deleted) is dropped.
func (m *memory) testFinished(key types.NamespacedName, run *testRun, result helm.TestRun, err error) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	run.done, run.result, run.err = true, result, err
	e, ok := m.m[key]
	return ok && e.testing == run
}

// testStopped forgets key's run once it has finished.
func (m *memory) testStopped(key types.NamespacedName) {
	m.lookup(key, func(e *entry) {
		if e.testing != nil && e.testing.done {
			e.testing = nil
		}
	})
}

// testRecorded remembers run, whose result was just recorded on its revision.
func (m *memory) testRecorded(key types.NamespacedName, run testedRun) {
	m.update(key, func(e *entry) { e.tested = &run })
}

// testAnswered reports whether the last run answered the request token: a
// status read from before that run's write does not show it yet.
func (m *memory) testAnswered(key types.NamespacedName, token string) bool {
	answered := false
	m.lookup(key, func(e *entry) { answered = e.tested != nil && token != "" && e.tested.request == token })
	return answered
}

// testOverlay puts the labels of the last run on the revision of hist it was
// made on, while storage does not show them (on a copy of its labels: hist's
// may be the cache's), and returns the run's message. A run whose revision is
// gone is forgotten.
func (m *memory) testOverlay(key types.NamespacedName, hist []storage.Revision) string {
	var msg string
	m.lookup(key, func(e *entry) {
		run := e.tested
		if run == nil {
			return
		}
		for i := range hist {
			if hist[i].UID != run.uid {
				continue
			}
			if hist[i].Labels[storage.LabelTestedAt] != run.labels[storage.LabelTestedAt] {
				labels := maps.Clone(hist[i].Labels)
				maps.Copy(labels, run.labels)
				hist[i].Labels = labels
			}
			msg = run.message
			return
		}
		e.tested = nil
	})
	return msg
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
		c := metav1.Condition{Type: status.ConditionTested, Status: metav1.ConditionTrue, Reason: status.ReasonTestSucceeded, Message: testMessage(*run)}
		if !run.Passed {
			c.Status, c.Reason = metav1.ConditionFalse, status.ReasonTestFailed
		}
		return &c
	}
	if run := o.testRunning; run != nil {
		return &metav1.Condition{Type: status.ConditionTested, Status: metav1.ConditionUnknown, Reason: status.ReasonTestRunning,
			Message: fmt.Sprintf("Revision %d's tests are running, since %s", o.facts.Deployed.Number, run.started.UTC().Format(time.RFC3339))}
	}
	if o.testNotRun != "" {
		return &metav1.Condition{Type: status.ConditionTested, Status: metav1.ConditionFalse, Reason: status.ReasonTestNotRun, Message: o.testNotRun}
	}
	if d := o.facts.Deployed; d != nil && d.Labels[storage.LabelTest] == status.TestPassed {
		return &metav1.Condition{Type: status.ConditionTested, Status: metav1.ConditionTrue, Reason: status.ReasonTestSucceeded,
			Message: lastTested(o, status.ReasonTestSucceeded, d.Number, fmt.Sprintf("Revision %d passed its tests", d.Number))}
	}
	if d := o.facts.Deployed; d != nil && d.Labels[storage.LabelTest] == status.TestFailed {
		return &metav1.Condition{Type: status.ConditionTested, Status: metav1.ConditionFalse, Reason: status.ReasonTestFailed, Message: testFailure(o)}
	}
	if o.awaitingTest {
		return &metav1.Condition{Type: status.ConditionTested, Status: metav1.ConditionUnknown, Reason: status.ReasonTestPending,
			Message: fmt.Sprintf("Revision %d is tested once it is Ready (test.enable)", o.facts.Deployed.Number)}
	}
	return nil
}

// testFailure says how the deployed revision failed its tests: the failure
// recorded for the wanted spec, else the Tested condition about it.
func testFailure(o *observation) string {
	n := o.facts.Deployed.Number
	if o.failure.reason == status.ReasonTestFailed && strings.HasPrefix(o.failure.message, fmt.Sprintf("Revision %d failed", n)) {
		return o.failure.message
	}
	return lastTested(o, status.ReasonTestFailed, n, fmt.Sprintf("Revision %d failed its tests", n))
}

// lastTested returns the message of the last run of revision n that ended
// with reason: this process's, else the Tested condition's as read, else
// fallback.
func lastTested(o *observation, reason string, n int, fallback string) string {
	about := fmt.Sprintf("Revision %d ", n)
	if strings.HasPrefix(o.lastTest, about) && (reason == status.ReasonTestSucceeded) == strings.HasPrefix(o.lastTest, about+"passed") {
		return o.lastTest
	}
	conds, _, _ := unstructured.NestedSlice(o.obj.Object, "status", "conditions")
	for _, raw := range conds {
		m, ok := raw.(map[string]any)
		if !ok || m["type"] != status.ConditionTested || m["reason"] != reason {
			continue
		}
		if msg := fmt.Sprint(m["message"]); strings.HasPrefix(msg, about) {
			return msg
		}
	}
	return fallback
}

// testOf is the status.history entry's test of rev, from its labels.
func testOf(rev storage.Revision) *status.HistoryTest {
	result := rev.Labels[storage.LabelTest]
	if result == "" {
		return nil
	}
	t := &status.HistoryTest{Result: result}
	if at, err := strconv.ParseInt(rev.Labels[storage.LabelTestedAt], 10, 64); err == nil {
		c := metav1.NewTime(time.Unix(at, 0))
		t.Completed = &c
	}
	return t
}
