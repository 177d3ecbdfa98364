package reconcile

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/reconcile/charttest"
	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/redact"
	"github.com/rudder-operator/rudder/internal/stored"
)

// Everything memory keeps of a resource is in its one entry, which Forget
// drops; what only clears a field never brings a forgotten entry back.
func TestMemory_ForgetDropsEverything(t *testing.T) {
	var m memory
	key := types.NamespacedName{Namespace: "ns", Name: "web"}
	other := types.NamespacedName{Namespace: "ns", Name: "other"}
	now := time.Now()
	want := plan.Digests{Values: "v", Chart: "c"}
	m.Expect(key, &helm.Release{Revision: 2}, "", now)
	m.RecordFailure(key, want, status.ReasonUpgradeFailed, "boom", now)
	m.wrote(key, "7", now)
	m.firstNotice(key, "uid-1")
	m.setState(key, resourceState{release: "deployed", ready: true})
	m.TestStarted(key, &charttest.Run{UID: "uid-2"})
	m.TestRecorded(key, charttest.Recorded{UID: "uid-2", Request: "t"})
	m.setSecrets(key, redact.New("s3cret"))
	m.RememberWritten(key, &helm.Release{Name: "web", Revision: 2})
	m.wrote(other, "1", now)

	if got := m.len(); got != 2 {
		t.Fatalf("len = %d, want 2 (one entry per resource)", got)
	}
	m.Forget(key)
	if got := m.len(); got != 1 {
		t.Fatalf("after Forget: len = %d, want 1", got)
	}
	if !m.caughtUp(key, nil, now) || m.failure(key, want).Count != 0 || !m.shows(key, "8") ||
		!m.firstNotice(key, "uid-1") || m.secretsOf(key) != nil || m.TestAnswered(key, "t") {
		t.Error("something of the forgotten resource is still remembered")
	}
	if _, ok := m.TestRunning(key); ok {
		t.Error("the forgotten resource's test run is still remembered")
	}
	if _, ok := m.states()[key]; ok {
		t.Error("the forgotten resource's state is still exported")
	}
	m.Forget(key)

	// Clearing a field of a resource memory does not hold creates nothing.
	m.Unexpect(key)
	m.ForgetFailure(key)
	m.dropSecrets(key)
	m.TestStopped(key)
	m.pruneRevisions(key, []stored.Revision{{Number: 1}})
	if m.TestFinished(key, &charttest.Run{}, helm.TestRun{}, nil) {
		t.Error("a run of a forgotten resource counts as its run")
	}
	if got := m.len(); got != 1 {
		t.Errorf("len = %d after clearing fields of a forgotten resource, want 1", got)
	}
}
