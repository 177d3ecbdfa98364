package charttest

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/stored"
)

// runs is a Memory of one resource's runs, for the decisions that run no
// Helm action.
type runs struct {
	running  *Run
	answered string
	started  int
}

func (m *runs) TestStarted(_ types.NamespacedName, run *Run) { m.running = run; m.started++ }
func (m *runs) TestRunning(types.NamespacedName) (Run, bool) {
	if m.running == nil {
		return Run{}, false
	}
	return *m.running, true
}
func (m *runs) TestFinished(types.NamespacedName, *Run, helm.TestRun, error) bool { return true }
func (m *runs) TestStopped(types.NamespacedName)                                  { m.running = nil }
func (m *runs) TestRecorded(_ types.NamespacedName, run Recorded)                 { m.answered = run.Request }
func (m *runs) TestAnswered(_ types.NamespacedName, token string) bool {
	return token != "" && m.answered == token
}
func (m *runs) RecordFailure(types.NamespacedName, plan.Digests, string, string, time.Time) status.Failure {
	return status.Failure{}
}
func (m *runs) ForgetFailure(types.NamespacedName) {}

// observed is a reconcile's observation of a resource asking for the test
// run token ("" for none) and a release whose newest revision is latest and
// whose deployed one is 1.
func observed(token string, latest stored.Revision) *status.Observation {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	if token != "" {
		obj.SetAnnotations(map[string]string{status.AnnotationTestRequestedAt: token})
	}
	deployed := &stored.Revision{Number: 1, Status: "deployed", UID: "uid-1"}
	o := &status.Observation{Resource: obj}
	o.Facts.Deployed, o.Facts.Latest = deployed, deployed
	if latest.Number != 1 {
		o.Facts.Latest = &latest
	}
	return o
}

// TestRun_Decisions: what a reconcile does about the tests when none has to
// start: a run under way is reported, not started again; a request already
// answered by a write the cache does not show is not run twice; a request
// while the newest revision is not deployed is refused with the reason; and
// nothing is due without a request or test.enable.
func TestRun_Decisions(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "app"}
	ctx := context.Background()
	started := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)

	m := &runs{running: &Run{UID: "uid-1", Started: started}}
	o := observed("t1", stored.Revision{Number: 1})
	if err := (Tester{Memory: m}).Run(ctx, o, key, nil); err != nil || !o.TestStarted.Equal(started) || m.started != 0 {
		t.Errorf("a run under way: err %v, TestStarted %v, runs started %d; want it reported and none started", err, o.TestStarted, m.started)
	}

	m = &runs{answered: "t1"}
	o = observed("t1", stored.Revision{Number: 1})
	if err := (Tester{Memory: m}).Run(ctx, o, key, nil); err != nil || o.TestHandled != "t1" || m.started != 0 {
		t.Errorf("an answered request: err %v, TestHandled %q, runs started %d; want t1 handled and none started", err, o.TestHandled, m.started)
	}

	m = &runs{}
	o = observed("t2", stored.Revision{Number: 2, Status: "pending-upgrade"})
	if err := (Tester{Memory: m}).Run(ctx, o, key, nil); err != nil || o.TestHandled != "t2" || m.started != 0 ||
		!strings.Contains(o.TestNotRun, "revision 2 is pending-upgrade, not deployed") {
		t.Errorf("a request while revision 2 is pending: err %v, TestHandled %q, TestNotRun %q, runs started %d; want it refused with why",
			err, o.TestHandled, o.TestNotRun, m.started)
	}

	m = &runs{}
	o = observed("", stored.Revision{Number: 1})
	o.Health = &status.Health{Ready: true}
	if err := (Tester{Memory: m}).Run(ctx, o, key, nil); err != nil || m.started != 0 || !o.TestStarted.IsZero() {
		t.Errorf("no request, test.enable unset: err %v, runs started %d; want none", err, m.started)
	}
}

// TestRequested: a request is the annotation's value until status says it
// was handled.
func TestRequested(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	if Requested(obj) {
		t.Error("no annotation: requested")
	}
	obj.SetAnnotations(map[string]string{status.AnnotationTestRequestedAt: "t1"})
	if !Requested(obj) {
		t.Error("annotation t1, nothing handled: not requested")
	}
	_ = unstructured.SetNestedField(obj.Object, "t1", "status", "lastHandledTestAt")
	if Requested(obj) {
		t.Error("annotation t1 handled: requested again")
	}
}
