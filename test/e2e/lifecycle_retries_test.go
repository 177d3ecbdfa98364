//go:build e2e

package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Issue 11, defect 5: the count of failed tries towards maxAttempts (3 for
// WebApp) survives a SIGKILL of the manager. A spec whose Deployment the API
// server rejects fails once; the manager is killed; the next one counts the
// second failure as the second, is killed too; the third one gives up after
// the third. Without status.failures each manager started the count again,
// and every crash bought a failing release new attempts.
func TestLifecycle_RetryCountSurvivesSIGKILL(t *testing.T) {
	t.Parallel() // its own operator over its own namespace
	op := privateOperator(t, "lc-retries")
	a := newApp(t, "lc-retries", "lc-retries")
	a.create(map[string]any{"image": "nginx:1.21", "replicas": 1, "port": 80})
	a.waitServing(1, "nginx:1.21", 1)

	a.patch(`{"spec":{"nodeSelector":{"not a label key!":"x"}}}`)
	for try := 1; try <= 2; try++ {
		eventuallyWithin(t, 2*time.Minute, fmt.Sprintf("status.failures.count %d", try), func() error {
			if got := a.failureCount(); got != try {
				return fmt.Errorf("status.failures.count = %d", got)
			}
			return nil
		})
		op.restart(t, "SIGKILL")
		a.poke()
	}
	eventuallyWithin(t, 3*time.Minute, "Released False (RetriesExhausted) after 3 tries in all", func() error {
		wa, err := a.get()
		if err != nil {
			return err
		}
		return checkCondition(wa, "Released", metav1.ConditionFalse, "RetriesExhausted", "Gave up after 3 failed tries", "nodeSelector")
	})
	a.holdsSteady(15*time.Second, 4, "nginx:1.21")
	failed := 0
	for _, r := range a.mustHistory() {
		if r.Status == "failed" {
			failed++
		}
	}
	if failed != 3 {
		t.Errorf("helm history %s: %d failed revisions across two SIGKILLs, want 3 (maxAttempts)", a.release(), failed)
	}
	// A good spec deploys, and the count is gone.
	a.patch(`{"spec":{"nodeSelector":null,"image":"nginx:1.22"}}`)
	a.waitServing(5, "nginx:1.22", 1)
	if got := a.failureCount(); got != 0 {
		t.Errorf("status.failures.count = %d after a success, want no failures", got)
	}
}

// failureCount reads status.failures.count; 0 when absent.
func (a *lcApp) failureCount() int {
	a.t.Helper()
	out := kubectl(a.t, "get", "webapp", a.name, "-n", a.ns, "-o", "jsonpath={.status.failures.count}")
	n, _ := strconv.Atoi(strings.TrimSpace(out))
	return n
}
