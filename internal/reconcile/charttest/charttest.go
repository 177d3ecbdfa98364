package charttest

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/stored"
	"github.com/rudder-operator/rudder/internal/watches"
)

// Tester runs the chart tests of one kind's releases.
type Tester struct {
	Test   watches.Test // the kind's test policy
	Memory Memory
	Events events.EventRecorder
	Clock  clock.PassiveClock // when failures are counted
	// ObserveHelm records how long a Helm action took (the metrics).
	ObserveHelm func(action string, started time.Time, err error)
	// Ended is called, off the worker, when a run that is still its
	// resource's ends: the controller reconciles the resource again.
	Ended func(key types.NamespacedName)
}

// Memory is where a kind's test runs are kept between reconciles.
type Memory interface {
	// TestStarted records run as key's run under way.
	TestStarted(key types.NamespacedName, run *Run)
	// TestRunning returns a copy of key's run under way or finished and
	// not recorded, and whether there is one.
	TestRunning(key types.NamespacedName) (Run, bool)
	// TestFinished records how run ended, and reports whether it is still
	// key's run: one forgotten meanwhile (the resource deleted) is dropped.
	TestFinished(key types.NamespacedName, run *Run, result helm.TestRun, err error) bool
	// TestStopped forgets key's run once it has finished.
	TestStopped(key types.NamespacedName)
	// TestRecorded remembers run, whose result was just recorded on its
	// revision, until storage shows it.
	TestRecorded(key types.NamespacedName, run Recorded)
	// TestAnswered reports whether the last run recorded answered the
	// request token.
	TestAnswered(key types.NamespacedName, token string) bool
	// RecordFailure counts one more failed try for want.
	RecordFailure(key types.NamespacedName, want plan.Digests, reason, message string, now time.Time) status.Failure
	// ForgetFailure ends the failures: the wanted digests succeeded.
	ForgetFailure(key types.NamespacedName)
}

// Run is one run of a revision's chart tests on its own goroutine.
type Run struct {
	UID     types.UID // the storage Secret of the revision tested
	Request string    // the AnnotationTestRequestedAt value it answers
	Started time.Time

	// Set once, under the memory's lock, when the run ends.
	Done   bool
	Result helm.TestRun
	Err    error // Helm could not run the tests (not a failed test)
}

// Recorded is the last run of a release's tests whose result was recorded
// on its revision: until storage shows those labels, memory does.
type Recorded struct {
	UID     types.UID
	Labels  map[string]string
	Message string
	Request string // the AnnotationTestRequestedAt value it answered
}

// Run runs the deployed revision of o's release's tests when they are due:
// on request (an AnnotationTestRequestedAt value not handled yet), or once
// after a revision rudder made for the wanted spec is first Ready, when the
// kind's test.enable is set. Helm tests the newest revision, so a request
// while the newest one is not deployed is refused. hc acts as the
// resource's account; key is the resource's.
//
// A run waits on the chart's test pods for up to the kind's test.timeout, so
// it runs on its own goroutine, not on the worker: the reconcile that starts
// it returns at once (Tested Unknown, TestRunning), and the run's end
// reconciles the resource again (Ended), which records its result.
//
// Precondition: a deployed revision, assessed.
func (t Tester) Run(ctx context.Context, o *status.Observation, key types.NamespacedName, hc *helm.Client) error {
	if run, ok := t.Memory.TestRunning(key); ok {
		if !run.Done {
			o.TestStarted = run.Started
			return nil
		}
		t.Memory.TestStopped(key)
		if run.UID == o.Facts.Deployed.UID {
			return t.record(ctx, o, key, hc, run)
		}
		ctrl.LoggerFrom(ctx).Info("Dropped the result of a chart test run: the revision it tested no longer serves",
			"revision", run.Result.Revision)
	}
	token := o.Resource.GetAnnotations()[status.AnnotationTestRequestedAt]
	requested := Requested(o.Resource)
	if o.Facts.Deployed == nil { // another Helm client's revision serves: rudder runs none of its hooks
		if requested {
			o.TestHandled = token
			o.TestNotRun = fmt.Sprintf("Not tested: revision %d, which serves, was written by another Helm client, and rudder runs no hook of it; "+
				"run helm test, or change the spec to have rudder deploy it again", o.Facts.Serving.Number)
		}
		return nil
	}
	switch {
	case requested && t.Memory.TestAnswered(key, token):
		o.TestHandled = token // by a status write the cache does not show yet
		return nil
	case o.Facts.Latest.Number != o.Facts.Deployed.Number:
		if requested {
			refuse(o)
		}
		return nil
	case requested || o.AwaitingTest && o.Health != nil && o.Health.Ready:
		t.start(ctx, o, key, hc)
	}
	return nil
}

// Requested reports whether obj asks for a test run it has not had.
func Requested(obj *unstructured.Unstructured) bool {
	token := obj.GetAnnotations()[status.AnnotationTestRequestedAt]
	handled, _, _ := unstructured.NestedString(obj.Object, "status", "lastHandledTestAt")
	return token != "" && token != handled
}

// refuse handles a test request the deployed revision cannot answer: Helm
// tests the newest revision, which is not deployed.
func refuse(o *status.Observation) {
	o.TestHandled = o.Resource.GetAnnotations()[status.AnnotationTestRequestedAt]
	o.TestNotRun = fmt.Sprintf("Not tested: Helm tests the newest revision, and revision %d is %s, not deployed; "+
		"ask again once the release is deployed", o.Facts.Latest.Number, o.Facts.Latest.Status)
}

// start starts a run of the deployed revision's chart tests on a goroutine
// of its own; its end calls Ended, whose reconcile records the result.
//
// Precondition: Run found the tests due and none running.
func (t Tester) start(ctx context.Context, o *status.Observation, key types.NamespacedName, hc *helm.Client) {
	run := &Run{
		UID:     o.Facts.Deployed.UID,
		Request: o.Resource.GetAnnotations()[status.AnnotationTestRequestedAt],
		Started: time.Now(),
	}
	t.Memory.TestStarted(key, run)
	o.TestStarted = run.Started
	ctrl.LoggerFrom(ctx).V(1).Info("Started the chart tests", "revision", o.Facts.Deployed.Number, "timeout", t.Test.Timeout)
	name := o.Release.Name
	go func() {
		result, err := hc.Test(name, t.Test.Timeout)
		if t.Memory.TestFinished(key, run, result, err) && t.Ended != nil {
			t.Ended(key)
		}
	}()
}

// record records how run of the deployed revision's chart tests ended: on
// the revision (LabelTest, LabelTestedAt), in the Tested condition and in an
// event.
//
// Precondition: run is done and tested the deployed revision.
func (t Tester) record(ctx context.Context, o *status.Observation, key types.NamespacedName, hc *helm.Client, run Run) error {
	log := ctrl.LoggerFrom(ctx)
	if run.Err != nil {
		return run.Err // the controller's backoff tries again
	}
	res := run.Result
	t.ObserveHelm("test", run.Started, failure(res))
	result := stored.TestPassed
	if !res.Passed {
		result = stored.TestFailed
	}
	labels := map[string]string{stored.LabelTest: result, stored.LabelTestedAt: strconv.FormatInt(res.Completed.Unix(), 10)}
	if _, err := hc.Label(o.Release.Name, res.Revision, labels); err != nil {
		return err
	}
	msg := status.TestMessage(res)
	o.TestRun = &res
	o.TestHandled = run.Request
	t.Memory.TestRecorded(key, Recorded{UID: run.UID, Labels: labels, Message: msg, Request: run.Request})
	// A failed run of the revision made for the wanted spec is a failed
	// upgrade (status.failures, which a restarted rudder reads too); a run
	// that passes ends it.
	switch {
	case plan.FailedTests(res.Passed, t.Test) && plan.DeploysWanted(o.Facts):
		o.Facts.TestFailed = true
		o.Failure = t.Memory.RecordFailure(key, o.Facts.Want, status.ReasonTestFailed, msg, t.Clock.Now())
	case res.Passed && o.Failure.Reason == status.ReasonTestFailed:
		t.Memory.ForgetFailure(key)
		o.Failure = status.Failure{}
	}
	if res.Passed {
		log.Info("Chart tests passed", "revision", res.Revision, "tests", len(res.Tests))
		t.Events.Eventf(o.Resource, nil, corev1.EventTypeNormal, status.ReasonTestSucceeded, "Test", "%s", msg)
	} else {
		log.Info("Chart tests failed", "revision", res.Revision, "failure", res.Failure)
		t.Events.Eventf(o.Resource, nil, corev1.EventTypeWarning, status.ReasonTestFailed, "Test", "%s", msg)
	}
	return nil
}

// failure is the error of a failed run, for the Helm action metrics.
func failure(run helm.TestRun) error {
	if run.Passed {
		return nil
	}
	return fmt.Errorf("%s", run.Failure)
}
