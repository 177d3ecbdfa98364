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
	ReasonTestNotRun    = "TestNotRun" // a request found no revision Helm can test
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
// Precondition: a deployed revision (maintain), assessed.
func (r *Reconciler) runTests(ctx context.Context, o *observation) error {
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
		return r.test(ctx, o)
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

// test runs the deployed revision's chart tests and records the result on
// it (LabelTest, LabelTestedAt), in the Tested condition and in an event.
//
// Precondition: runTests found the tests due.
func (r *Reconciler) test(ctx context.Context, o *observation) error {
	log := ctrl.LoggerFrom(ctx)
	hc, err := r.helmFor(o)
	if err != nil {
		return err
	}
	started := time.Now()
	run, err := hc.Test(o.release.Name, r.Watch.Test.Timeout)
	if err != nil {
		return err
	}
	r.observeHelm("test", started, testError(run))
	result := TestPassed
	if !run.Passed {
		result = TestFailed
	}
	labels := map[string]string{LabelTest: result, LabelTestedAt: strconv.FormatInt(run.Completed.Unix(), 10)}
	if _, err := hc.Label(o.release.Name, run.Revision, labels); err != nil {
		return err
	}
	msg := testMessage(run)
	o.testRun = &run
	o.testHandled = o.obj.GetAnnotations()[AnnotationTestRequestedAt]
	r.tested.set(o.key, testedRun{uid: o.facts.deployed.UID, labels: labels, message: msg, request: o.testHandled})
	// A failed run of the revision made for the wanted spec is a failed
	// upgrade (status.failures, which a restarted rudder reads too); a run
	// that passes ends it.
	switch {
	case failedTests(run.Passed, r.Watch.Test) && deploysWanted(o.facts):
		o.facts.testFailed = true
		o.failure = r.failures.record(o.key, o.facts.want, ReasonTestFailed, msg, r.now())
	case run.Passed && o.failure.reason == ReasonTestFailed:
		r.failures.forget(o.key)
		o.failure = failure{}
	}
	if run.Passed {
		log.Info("Chart tests passed", "revision", run.Revision, "tests", len(run.Tests))
		r.Recorder.Eventf(o.obj, nil, corev1.EventTypeNormal, ReasonTestSucceeded, "Test", "%s", msg)
	} else {
		log.Info("Chart tests failed", "revision", run.Revision, "failure", run.Failure)
		r.Recorder.Eventf(o.obj, nil, corev1.EventTypeWarning, ReasonTestFailed, "Test", "%s", msg)
	}
	return nil
}

// testedRuns remember, per custom resource, the last test run this process
// made, on a revision known by its storage Secret's UID: its labels, until
// storage shows them, so that a reconcile meanwhile does not test that
// revision again; and its message, which names each test, for the Tested
// condition while that revision serves.
type testedRuns struct {
	mu sync.Mutex
	m  map[types.NamespacedName]testedRun
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
}

func (t *testedRuns) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
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
