package reconcile

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/storage"
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
			o.TestStarted = run.started
			return nil
		}
		r.memory.testStopped(o.key)
		if run.uid == o.Facts.Deployed.UID {
			return r.recordTest(ctx, o, run)
		}
		ctrl.LoggerFrom(ctx).Info("Dropped the result of a chart test run: the revision it tested no longer serves",
			"revision", run.result.Revision)
	}
	token := o.Resource.GetAnnotations()[status.AnnotationTestRequestedAt]
	requested := testRequested(o.Resource)
	switch {
	case requested && r.memory.testAnswered(o.key, token):
		o.TestHandled = token // by a status write the cache does not show yet
		return nil
	case o.Facts.Latest.Number != o.Facts.Deployed.Number:
		if requested {
			refuseTest(o)
		}
		return nil
	case requested || o.AwaitingTest && o.Health != nil && o.Health.Ready:
		return r.startTest(ctx, o)
	}
	return nil
}

// testRequested reports whether obj asks for a test run it has not had.
func testRequested(obj *unstructured.Unstructured) bool {
	token := obj.GetAnnotations()[status.AnnotationTestRequestedAt]
	handled, _, _ := unstructured.NestedString(obj.Object, "status", "lastHandledTestAt")
	return token != "" && token != handled
}

// refuseTest handles a test request the deployed revision cannot answer:
// Helm tests the newest revision, which is not deployed.
func refuseTest(o *observation) {
	o.TestHandled = o.Resource.GetAnnotations()[status.AnnotationTestRequestedAt]
	o.TestNotRun = fmt.Sprintf("Not tested: Helm tests the newest revision, and revision %d is %s, not deployed; "+
		"ask again once the release is deployed", o.Facts.Latest.Number, o.Facts.Latest.Status)
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
		uid:     o.Facts.Deployed.UID,
		request: o.Resource.GetAnnotations()[status.AnnotationTestRequestedAt],
		started: time.Now(),
	}
	r.memory.testStarted(o.key, run)
	o.TestStarted = run.started
	ctrl.LoggerFrom(ctx).V(1).Info("Started the chart tests", "revision", o.Facts.Deployed.Number, "timeout", r.Watch.Test.Timeout)
	name, key, timeout := o.Release.Name, o.key, r.Watch.Test.Timeout
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
	result := storage.TestPassed
	if !res.Passed {
		result = storage.TestFailed
	}
	labels := map[string]string{storage.LabelTest: result, storage.LabelTestedAt: strconv.FormatInt(res.Completed.Unix(), 10)}
	if _, err := hc.Label(o.Release.Name, res.Revision, labels); err != nil {
		return err
	}
	msg := status.TestMessage(res)
	o.TestRun = &res
	o.TestHandled = run.request
	r.memory.testRecorded(o.key, testedRun{uid: run.uid, labels: labels, message: msg, request: run.request})
	// A failed run of the revision made for the wanted spec is a failed
	// upgrade (status.failures, which a restarted rudder reads too); a run
	// that passes ends it.
	switch {
	case plan.FailedTests(res.Passed, r.Watch.Test) && plan.DeploysWanted(o.Facts):
		o.Facts.TestFailed = true
		o.Failure = r.memory.RecordFailure(o.key, o.Facts.Want, status.ReasonTestFailed, msg, r.now())
	case res.Passed && o.Failure.Reason == status.ReasonTestFailed:
		r.memory.ForgetFailure(o.key)
		o.Failure = status.Failure{}
	}
	if res.Passed {
		log.Info("Chart tests passed", "revision", res.Revision, "tests", len(res.Tests))
		r.Recorder.Eventf(o.Resource, nil, corev1.EventTypeNormal, status.ReasonTestSucceeded, "Test", "%s", msg)
	} else {
		log.Info("Chart tests failed", "revision", res.Revision, "failure", res.Failure)
		r.Recorder.Eventf(o.Resource, nil, corev1.EventTypeWarning, status.ReasonTestFailed, "Test", "%s", msg)
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
