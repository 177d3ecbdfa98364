//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testsWatches is the repository's watches.yaml with test.enable and
// remediation strategy rollback on WebApp.
const testsWatches = "test/e2e/testdata/watches-tests.yaml"

// TestChartTests_AfterUpgradeAndOnRequest runs the WebApp chart's test (a
// pod fetching the Service, which kwok completes) as `helm test` would:
// after the install, once Ready (test.enable); on request with `rudder test`;
// and after an upgrade whose test pod the namespace refuses (a quota on
// BestEffort pods): that revision fails its tests and is rolled back, as
// remediation strategy rollback says. Each run is in status.history, the
// Tested condition and an event; `rudder test` exits non-zero on a failure.
func TestChartTests_AfterUpgradeAndOnRequest(t *testing.T) {
	t.Parallel() // its own operator over its own namespace
	ns := "chart-tests"
	privateOperator(t, ns, "--watches-file="+filepath.Join(root, testsWatches))
	a := newApp(t, ns, "tested")
	// Requests keep the WebApp's own pods out of the quota below.
	spec := map[string]any{"image": "nginx:1.21", "replicas": 1, "port": 80, "resources": notBestEffort}
	a.create(spec)
	wa := a.waitServing(1, "nginx:1.21", 1)
	uid := string(wa.Metadata.UID)

	t.Log("after the install: tested once Ready")
	a.waitCondition("Tested", metav1.ConditionTrue, "TestSucceeded", "Revision 1 passed its tests", "Pod/"+a.name+"-test: Succeeded")
	a.waitEvent(uid, "TestSucceeded", "Revision 1 passed its tests")
	a.checkTested(1, "Passed")
	eventually(t, "the passed test pod deleted (hook-delete-policy hook-succeeded)", func() error {
		if found, err := getJSON(&struct{}{}, "pod", a.name+"-test", "-n", ns); err != nil || found {
			return fmt.Errorf("expected pod %s-test gone, saw found=%v (err %w)", a.name, found, err)
		}
		return nil
	})

	t.Log("on request: rudder test")
	out, err := run("rudder", "test", "webapp/"+a.name, "-n", ns, "--wait", "2m")
	t.Logf("rudder test:\n%s", out)
	if err != nil {
		t.Fatalf("rudder test on a passing release: %v", err)
	}
	if !strings.Contains(out, "TestSucceeded: Revision 1 passed its tests") {
		t.Errorf("expected rudder test to print the passing run of revision 1, saw %q", out)
	}

	t.Log("an upgrade whose test pod is refused: failed, rolled back")
	holdJobs(t, ns) // refuses BestEffort pods: the test pod is one
	a.patch(`{"spec":{"image":"nginx:1.22"}}`)
	a.waitCondition("Ready", metav1.ConditionFalse, "RolledBackAfterFailure",
		"Rollback to 1: Revision 2 failed its tests", "exceeded quota")
	a.waitEvent(uid, "TestFailed", "Revision 2 failed its tests", "exceeded quota")
	a.waitEvent(uid, "RolledBackAfterFailure", "Rolled back to revision 1 as revision 3", "Revision 2 failed its tests")
	a.checkTested(2, "Failed")
	if err := a.sameValues(spec); err != nil {
		t.Errorf("after the rollback: expected revision 1's values: %v", err)
	}
	a.holdsSteady(0, 3, "nginx:1.21")

	t.Log("on request, while the quota still refuses the test pod: rudder test fails")
	out, err = run("rudder", "test", "webapp/"+a.name, "-n", ns, "--wait", "2m")
	t.Logf("rudder test:\n%s", out)
	if err == nil || !strings.Contains(out, "TestFailed: Revision 3 failed its tests") {
		t.Errorf("expected rudder test to fail and print revision 3's failed run, saw error %v and %q", err, out)
	}

	t.Log("quota lifted: on request, passes")
	releaseJobs(t, ns)
	out, err = run("rudder", "test", "webapp/"+a.name, "-n", ns, "--wait", "2m")
	t.Logf("rudder test:\n%s", out)
	if err != nil {
		t.Errorf("rudder test after the quota was lifted: %v", err)
	}
	a.checkTested(3, "Passed")
	if n := len(a.mustHistory()); n != 3 {
		t.Errorf("expected 3 revisions (tests make none), saw %d", n)
	}
}

// checkTested waits for status.history to show revision's last test result.
func (a *lcApp) checkTested(revision int, result string) {
	a.t.Helper()
	eventually(a.t, fmt.Sprintf("revision %d's test %s in status.history", revision, result), func() error {
		wa, err := a.get()
		if err != nil {
			return err
		}
		for _, e := range wa.Status.History {
			if e.Revision != revision {
				continue
			}
			if e.Test == nil || e.Test.Result != result || e.Test.Completed == nil {
				return fmt.Errorf("expected revision %d's test %s with its time, saw %s", revision, result, toJSON(e.Test))
			}
			return nil
		}
		return fmt.Errorf("revision %d is not in status.history: %s", revision, toJSON(wa.Status.History))
	})
}
