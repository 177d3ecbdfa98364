package status

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/stored"
)

// testedCondition is the Tested condition: from this reconcile's run, else
// from the deployed revision's test labels; Unknown while the kind's
// test.enable waits for the deployed revision to be Ready; else nil: the
// previous one stays, naming the revision it is about. It never depends on
// the status as read alone, which the cache may show from before a run.
func testedCondition(o *Observation) *metav1.Condition {
	if run := o.TestRun; run != nil {
		c := metav1.Condition{Type: ConditionTested, Status: metav1.ConditionTrue, Reason: ReasonTestSucceeded, Message: TestMessage(*run)}
		if !run.Passed {
			c.Status, c.Reason = metav1.ConditionFalse, ReasonTestFailed
		}
		return &c
	}
	if !o.TestStarted.IsZero() {
		return &metav1.Condition{Type: ConditionTested, Status: metav1.ConditionUnknown, Reason: ReasonTestRunning,
			Message: fmt.Sprintf("Revision %d's tests are running, since %s", o.Facts.Deployed.Number, o.TestStarted.UTC().Format(time.RFC3339))}
	}
	if o.TestNotRun != "" {
		return &metav1.Condition{Type: ConditionTested, Status: metav1.ConditionFalse, Reason: ReasonTestNotRun, Message: o.TestNotRun}
	}
	if d := o.Facts.Deployed; d != nil && d.Labels[stored.LabelTest] == stored.TestPassed {
		return &metav1.Condition{Type: ConditionTested, Status: metav1.ConditionTrue, Reason: ReasonTestSucceeded,
			Message: lastTested(o, ReasonTestSucceeded, d.Number, fmt.Sprintf("Revision %d passed its tests", d.Number))}
	}
	if d := o.Facts.Deployed; d != nil && d.Labels[stored.LabelTest] == stored.TestFailed {
		return &metav1.Condition{Type: ConditionTested, Status: metav1.ConditionFalse, Reason: ReasonTestFailed, Message: TestFailure(o)}
	}
	if o.AwaitingTest {
		return &metav1.Condition{Type: ConditionTested, Status: metav1.ConditionUnknown, Reason: ReasonTestPending,
			Message: fmt.Sprintf("Revision %d is tested once it is Ready (test.enable)", o.Facts.Deployed.Number)}
	}
	return nil
}

// TestFailure says how the deployed revision failed its tests: the failure
// recorded for the wanted spec, else the Tested condition about it.
func TestFailure(o *Observation) string {
	n := o.Facts.Deployed.Number
	if o.Failure.Reason == ReasonTestFailed && strings.HasPrefix(o.Failure.Message, fmt.Sprintf("Revision %d failed", n)) {
		return o.Failure.Message
	}
	return lastTested(o, ReasonTestFailed, n, fmt.Sprintf("Revision %d failed its tests", n))
}

// lastTested returns the message of the last run of revision n that ended
// with reason: this process's, else the Tested condition's as read, else
// fallback.
func lastTested(o *Observation, reason string, n int, fallback string) string {
	about := fmt.Sprintf("Revision %d ", n)
	if strings.HasPrefix(o.LastTest, about) && (reason == ReasonTestSucceeded) == strings.HasPrefix(o.LastTest, about+"passed") {
		return o.LastTest
	}
	conds, _, _ := unstructured.NestedSlice(o.Resource.Object, "status", "conditions")
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

// TestMessage says how run ended, naming the tests.
func TestMessage(run helm.TestRun) string {
	tests := "no tests: the chart has no helm.sh/hook: test templates"
	if len(run.Tests) > 0 {
		tests = strings.Join(run.Tests, ", ")
	}
	took := run.Completed.Sub(run.Started).Round(100 * time.Millisecond)
	if run.Passed {
		return fmt.Sprintf("Revision %d passed its tests in %s (%s)", run.Revision, took, tests)
	}
	return Cut(fmt.Sprintf("Revision %d failed its tests after %s: %s (%s)", run.Revision, took, run.Failure, tests), 1000)
}

// TestOf is the status.history entry's test of rev, from its labels.
func TestOf(rev stored.Revision) *HistoryTest {
	result := rev.Labels[stored.LabelTest]
	if result == "" {
		return nil
	}
	t := &HistoryTest{Result: result}
	if at, err := strconv.ParseInt(rev.Labels[stored.LabelTestedAt], 10, 64); err == nil {
		c := metav1.NewTime(time.Unix(at, 0))
		t.Completed = &c
	}
	return t
}
