package reconcile

import (
	"errors"
	"testing"
	"time"

	"github.com/rudder-operator/rudder/internal/storage"
)

func rev(n int, status string, d digests) *storage.Revision {
	return &storage.Revision{Number: n, Status: status, Labels: map[string]string{
		LabelValuesDigest: d.values, LabelChartDigest: d.chart,
	}}
}

func held(r *storage.Revision, holder string) *storage.Revision {
	r.Labels[LabelHolder] = holder
	return r
}

func TestPlan(t *testing.T) {
	v1 := digests{values: "v1", chart: "c1"}
	v2 := digests{values: "v2", chart: "c1"}
	c2 := digests{values: "v1", chart: "c2"}
	tests := []struct {
		name string
		f    facts
		want step
	}{
		{name: "deleting wins over everything", f: facts{deleting: true, caughtUp: false, valuesErr: errors.New("x")}, want: stepUninstall},
		{name: "storage behind our last action", f: facts{want: v1}, want: stepWait},
		{name: "rollback asked", f: facts{caughtUp: true, want: v2, rollbackTo: 1, rolledBackAt: -1, latest: rev(2, "deployed", v2), deployed: rev(2, "deployed", v2)}, want: stepRollback},
		{name: "rolled back: held though the spec differs", f: facts{caughtUp: true, want: v2, generation: 3, rollbackTo: 1, rolledBackAt: 3, latest: rev(3, "deployed", v1), deployed: rev(3, "deployed", v1)}, want: stepNone},
		{name: "spec changed after the rollback", f: facts{caughtUp: true, want: v2, generation: 4, rollbackTo: 1, rolledBackAt: 3, latest: rev(3, "deployed", v1), deployed: rev(3, "deployed", v1)}, want: stepRollbackDone},
		{name: "rollback annotation not a number", f: facts{caughtUp: true, want: v1, rollbackErr: errors.New("x")}, want: stepInvalid},
		{name: "paused, with a change waiting", f: facts{caughtUp: true, paused: true, want: v2, latest: rev(1, "deployed", v1), deployed: rev(1, "deployed", v1)}, want: stepPaused},
		{name: "paused but deleted", f: facts{deleting: true, paused: true}, want: stepUninstall},
		{name: "values cannot be computed", f: facts{caughtUp: true, valuesErr: errors.New("bad override")}, want: stepInvalid},
		{name: "nothing stored", f: facts{caughtUp: true, want: v1}, want: stepInstall},
		{name: "a hook failed", f: facts{caughtUp: true, want: v1, hookErr: errors.New("cannot create Secret")}, want: stepBlocked},
		{name: "deployed with wanted digests", f: facts{caughtUp: true, want: v1, latest: rev(1, "deployed", v1), deployed: rev(1, "deployed", v1)}, want: stepNone},
		{name: "values changed", f: facts{caughtUp: true, want: v2, latest: rev(1, "deployed", v1), deployed: rev(1, "deployed", v1)}, want: stepUpgrade},
		{name: "chart changed", f: facts{caughtUp: true, want: c2, latest: rev(1, "deployed", v1), deployed: rev(1, "deployed", v1)}, want: stepUpgrade},
		{name: "pending, held by another writer", f: facts{caughtUp: true, want: v2, latest: rev(2, "pending-upgrade", v2), deployed: rev(1, "deployed", v1)}, want: stepWait},
		{name: "pending, held by this process", f: facts{caughtUp: true, self: "me", want: v2, latest: held(rev(2, "pending-upgrade", v2), "me"), deployed: rev(1, "deployed", v1)}, want: stepWait},
		{name: "pending, left by a rudder that is gone", f: facts{caughtUp: true, self: "me", want: v2, latest: held(rev(2, "pending-install", v2), "gone")}, want: stepUnlock},
		{name: "first install failed, spec changed", f: facts{caughtUp: true, want: v2, latest: rev(1, "failed", v1)}, want: stepReinstall},
		{name: "failed upgrade, spec reverted to deployed", f: facts{caughtUp: true, want: v1, latest: rev(2, "failed", v2), deployed: rev(1, "deployed", v1), failures: maxAttempts}, want: stepNone},
		{name: "retry after backoff", f: facts{caughtUp: true, want: v2, latest: rev(2, "failed", v2), deployed: rev(1, "deployed", v1), failures: 1}, want: stepUpgrade},
		{name: "backoff not over", f: facts{caughtUp: true, want: v2, latest: rev(2, "failed", v2), deployed: rev(1, "deployed", v1), failures: 1, retryIn: time.Second}, want: stepWait},
		{name: "retries exhausted", f: facts{caughtUp: true, want: v2, latest: rev(4, "failed", v2), deployed: rev(1, "deployed", v1), failures: maxAttempts}, want: stepHold},
		{name: "install failed with no revision, retries exhausted", f: facts{caughtUp: true, want: v1, failures: maxAttempts}, want: stepHold},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := plan(tt.f); got != tt.want {
				t.Errorf("plan() = %s, want %s", got, tt.want)
			}
		})
	}
}
