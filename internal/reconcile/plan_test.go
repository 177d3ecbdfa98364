package reconcile

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/rudder-operator/rudder/internal/depends"
	"github.com/rudder-operator/rudder/internal/storage"
	"github.com/rudder-operator/rudder/internal/watches"
)

// rev is a revision rudder wrote.
func rev(n int, status string, d digests) *storage.Revision {
	return &storage.Revision{Number: n, Status: status, UID: types.UID(fmt.Sprint("uid-", n)), Labels: map[string]string{
		LabelValuesDigest: d.values, LabelChartDigest: d.chart, LabelRevision: strconv.Itoa(n),
	}}
}

// byHand is r as helm upgrade or helm rollback writes it: with the labels of
// revision `from` copied.
func byHand(r *storage.Revision, from int) *storage.Revision {
	r.Labels[LabelRevision] = strconv.Itoa(from)
	return r
}

// remediating marks r as a rollback made because digests d failed.
func remediating(r *storage.Revision, d digests) *storage.Revision {
	r.Labels[LabelFailedValuesDigest], r.Labels[LabelFailedChartDigest] = d.values, d.chart
	return r
}

var (
	retry    = watches.Remediation{Strategy: watches.StrategyRetry, MaxAttempts: 3}
	rollback = watches.Remediation{Strategy: watches.StrategyRollback, MaxAttempts: 3}
	uninst   = watches.Remediation{Strategy: watches.StrategyRetry, MaxAttempts: 3, InstallFailure: watches.InstallFailureUninstall}
)

// rollingBackAs is r with the LabelRollbackAs rudder puts on a rollback's
// target, copied by Helm.
func rollingBackAs(r *storage.Revision, n int) *storage.Revision {
	r.Labels[LabelRollbackAs] = strconv.Itoa(n)
	return r
}

// uninstallOf is r with the LabelUninstallOf rudder puts on revision n before
// it uninstalls a release its resource still wants.
func uninstallOf(r *storage.Revision, n int) *storage.Revision {
	r.Labels[LabelUninstallOf] = strconv.Itoa(n)
	return r
}

func held(r *storage.Revision, holder string) *storage.Revision {
	r.Labels[LabelHolder] = holder
	return r
}

// notReady is what depends.Kinds.Check says of a dependency not Ready.
var notReady = &depends.Error{Reason: depends.ReasonNotReady, Message: "Waiting for Database orders to exist"}

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
		{name: "an install waits for a dependency", f: facts{caughtUp: true, want: v1, dependsErr: notReady}, want: stepDepend},
		{name: "an upgrade waits for a dependency", f: facts{caughtUp: true, want: v2, dependsErr: notReady, latest: rev(1, "deployed", v1), deployed: rev(1, "deployed", v1)}, want: stepDepend},
		{name: "a release up to date is maintained whatever its dependencies", f: facts{caughtUp: true, want: v1, dependsErr: notReady, latest: rev(1, "deployed", v1), deployed: rev(1, "deployed", v1)}, want: stepNone},
		{name: "a deletion does not wait for dependencies", f: facts{deleting: true, dependsErr: notReady}, want: stepUninstall},
		{name: "chart changed", f: facts{caughtUp: true, want: c2, latest: rev(1, "deployed", v1), deployed: rev(1, "deployed", v1)}, want: stepUpgrade},
		{name: "pending, held by another writer", f: facts{caughtUp: true, want: v2, latest: rev(2, "pending-upgrade", v2), deployed: rev(1, "deployed", v1)}, want: stepWait},
		// Our own Helm action ended without recording its end (the API server went away).
		{name: "pending, held by this process", f: facts{caughtUp: true, self: "me", want: v2, latest: held(rev(2, "pending-upgrade", v2), "me"), deployed: rev(1, "deployed", v1)}, want: stepUnlock},
		{name: "pending, held by another process that runs", f: facts{caughtUp: true, self: "me", holderAlive: true, want: v2, latest: held(rev(2, "pending-upgrade", v2), "peer"), deployed: rev(1, "deployed", v1)}, want: stepWait},
		{name: "pending, left by a rudder that is gone", f: facts{caughtUp: true, self: "me", want: v2, latest: held(rev(2, "pending-install", v2), "gone")}, want: stepUnlock},
		{name: "pending upgrade by hand, rudder's labels copied", f: facts{caughtUp: true, self: "me", want: v2, latest: byHand(held(rev(2, "pending-upgrade", v1), "gone"), 1), deployed: rev(1, "deployed", v1)}, want: stepWait},
		{name: "pending rollback left by a rudder that is gone", f: facts{caughtUp: true, self: "me", want: v2, latest: rollingBackAs(byHand(held(rev(3, "pending-rollback", v1), "gone"), 1), 3), deployed: rev(2, "deployed", v2)}, want: stepUnlock},
		{name: "pending rollback by hand, rudder's labels copied", f: facts{caughtUp: true, self: "me", want: v2, latest: byHand(held(rev(3, "pending-rollback", v1), "gone"), 1), deployed: rev(2, "deployed", v2)}, want: stepWait},
		{name: "pending rollback by hand to a revision rudder rolled back to before", f: facts{caughtUp: true, self: "me", want: v2, latest: rollingBackAs(byHand(held(rev(5, "pending-rollback", v1), "gone"), 1), 3), deployed: rev(4, "deployed", v2)}, want: stepWait},
		{name: "rollback by rudder, stopped before relabeling it: not out of band", f: facts{caughtUp: true, self: "me", want: v1, latest: rollingBackAs(byHand(rev(3, "deployed", v1), 1), 3), deployed: rollingBackAs(byHand(rev(3, "deployed", v1), 1), 3)}, want: stepNone},
		{name: "rollback by hand to the same revision: out of band", f: facts{caughtUp: true, self: "me", want: v1, latest: byHand(rev(3, "deployed", v1), 1), deployed: byHand(rev(3, "deployed", v1), 1)}, want: stepUpgrade},
		{name: "uninstall by hand of a revision rudder wrote", f: facts{caughtUp: true, self: "me", want: v2, latest: held(rev(2, "uninstalling", v2), "gone"), deployed: rev(1, "superseded", v1)}, want: stepWait},
		{name: "reinstall's uninstall left by a rudder that is gone", f: facts{caughtUp: true, self: "me", want: v2, latest: uninstallOf(held(rev(1, "uninstalling", v1), "gone"), 1)}, want: stepUnlock},
		{name: "reinstall's uninstall left by this process", f: facts{caughtUp: true, self: "me", want: v2, latest: uninstallOf(held(rev(1, "uninstalling", v1), "me"), 1)}, want: stepUnlock},
		{name: "reinstall's uninstall by a rudder that runs", f: facts{caughtUp: true, self: "me", holderAlive: true, want: v2, latest: uninstallOf(held(rev(1, "uninstalling", v1), "peer"), 1)}, want: stepWait},
		{name: "uninstall by hand, rudder's uninstall mark copied by helm upgrade", f: facts{caughtUp: true, self: "me", want: v2, latest: uninstallOf(byHand(held(rev(3, "uninstalling", v2), "gone"), 2), 2), deployed: rev(1, "superseded", v1)}, want: stepWait},
		{name: "first install failed, spec changed", f: facts{caughtUp: true, want: v2, latest: rev(1, "failed", v1)}, want: stepReinstall},
		{name: "upgrade canceled half-way, none deployed", f: facts{caughtUp: true, want: v2, latest: rev(2, "failed", v2), everDeployed: true, failures: 1}, want: stepUpgrade},
		{name: "failed upgrade, spec reverted to deployed", f: facts{caughtUp: true, want: v1, latest: rev(2, "failed", v2), deployed: rev(1, "deployed", v1), failures: 3}, want: stepNone},
		{name: "retry after backoff", f: facts{caughtUp: true, want: v2, latest: rev(2, "failed", v2), deployed: rev(1, "deployed", v1), failures: 1}, want: stepUpgrade},
		{name: "backoff not over", f: facts{caughtUp: true, want: v2, latest: rev(2, "failed", v2), deployed: rev(1, "deployed", v1), failures: 1, retryIn: time.Second}, want: stepWait},
		{name: "retries exhausted", f: facts{caughtUp: true, want: v2, latest: rev(4, "failed", v2), deployed: rev(1, "deployed", v1), failures: 3}, want: stepHold},
		{name: "install failed with no revision, retries exhausted", f: facts{caughtUp: true, want: v1, failures: 3}, want: stepHold},

		// Remediation.
		{name: "rollback strategy: attempts left, retry", f: facts{caughtUp: true, remediation: rollback, want: v2, latest: rev(2, "failed", v2), deployed: rev(1, "deployed", v1), failures: 2}, want: stepUpgrade},
		{name: "rollback strategy: last attempt stored a failed revision, roll back", f: facts{caughtUp: true, remediation: rollback, want: v2, latest: rev(3, "failed", v2), deployed: rev(1, "deployed", v1), failures: 3}, want: stepRemediate},
		{name: "rollback strategy: render errors stored nothing, hold", f: facts{caughtUp: true, remediation: rollback, want: v2, latest: rev(1, "deployed", v1), deployed: rev(1, "deployed", v1), failures: 3}, want: stepHold},
		{name: "rollback strategy: failed revision of an older spec, hold", f: facts{caughtUp: true, remediation: rollback, want: c2, latest: rev(2, "failed", v2), deployed: rev(1, "deployed", v1), failures: 3}, want: stepHold},
		{name: "rollback strategy: the remediating rollback failed, hold", f: facts{caughtUp: true, remediation: rollback, remediationFailed: true, want: v2, latest: rev(3, "failed", v2), deployed: rev(1, "deployed", v1), failures: 4}, want: stepHold},
		{name: "retry strategy: attempts exhausted, hold", f: facts{caughtUp: true, remediation: retry, want: v2, latest: rev(3, "failed", v2), deployed: rev(1, "deployed", v1), failures: 3}, want: stepHold},
		{name: "not Ready in time, rollback: back to the previous revision", f: facts{caughtUp: true, remediation: rollback, stalled: true, want: v2, latest: rev(2, "deployed", v2), deployed: rev(2, "deployed", v2), previous: rev(1, "superseded", v1)}, want: stepRemediate},
		{name: "not Ready in time, rollback, no previous revision", f: facts{caughtUp: true, remediation: rollback, stalled: true, want: v2, latest: rev(1, "deployed", v2), deployed: rev(1, "deployed", v2)}, want: stepNone},
		{name: "failed its tests, rollback: back to the previous revision", f: facts{caughtUp: true, remediation: rollback, testFailed: true, want: v2, latest: rev(2, "deployed", v2), deployed: rev(2, "deployed", v2), previous: rev(1, "superseded", v1)}, want: stepRemediate},
		{name: "failed its tests, rollback, no previous revision: held", f: facts{caughtUp: true, remediation: rollback, testFailed: true, want: v2, latest: rev(1, "deployed", v2), deployed: rev(1, "deployed", v2)}, want: stepNone},
		{name: "failed its tests, retry: left serving", f: facts{caughtUp: true, remediation: retry, testFailed: true, want: v2, latest: rev(2, "deployed", v2), deployed: rev(2, "deployed", v2), previous: rev(1, "superseded", v1)}, want: stepNone},
		{name: "not Ready in time, retry: left serving", f: facts{caughtUp: true, remediation: retry, stalled: true, want: v2, latest: rev(2, "deployed", v2), deployed: rev(2, "deployed", v2), previous: rev(1, "superseded", v1)}, want: stepNone},
		{name: "rolled back after a failure: held", f: facts{caughtUp: true, remediation: rollback, want: v2, latest: rev(3, "deployed", v1), deployed: remediating(rev(3, "deployed", v1), v2), previous: rev(2, "superseded", v2)}, want: stepNone},
		{name: "rolled back after a failure, spec changed: upgrade", f: facts{caughtUp: true, remediation: rollback, want: c2, latest: rev(3, "deployed", v1), deployed: remediating(rev(3, "deployed", v1), v2)}, want: stepUpgrade},
		{name: "failed install, policy keep: reinstall", f: facts{caughtUp: true, remediation: retry, want: v1, latest: rev(1, "failed", v1), failures: 1}, want: stepReinstall},
		{name: "failed install, policy uninstall", f: facts{caughtUp: true, remediation: uninst, want: v1, latest: rev(1, "failed", v1), failures: 1, retryIn: time.Second}, want: stepDropInstall},
		{name: "failed install, policy uninstall, attempts exhausted: still uninstalled", f: facts{caughtUp: true, remediation: uninst, want: v1, latest: rev(1, "failed", v1), failures: 3}, want: stepDropInstall},
		{name: "failed install uninstalled, backoff", f: facts{caughtUp: true, remediation: uninst, want: v1, failures: 1, retryIn: time.Second}, want: stepWait},

		// Out-of-band Helm.
		{name: "helm upgrade by hand, revert", f: facts{caughtUp: true, outOfBand: watches.OutOfBandRevert, want: v1, latest: byHand(rev(2, "deployed", v1), 1), deployed: byHand(rev(2, "deployed", v1), 1), ours: rev(1, "superseded", v1)}, want: stepUpgrade},
		{name: "helm rollback by hand, revert", f: facts{caughtUp: true, outOfBand: watches.OutOfBandRevert, want: v2, latest: byHand(rev(3, "deployed", v1), 1), deployed: byHand(rev(3, "deployed", v1), 1), ours: rev(2, "superseded", v2)}, want: stepUpgrade},
		{name: "helm upgrade by hand, keep", f: facts{caughtUp: true, outOfBand: watches.OutOfBandKeep, want: v1, latest: byHand(rev(2, "deployed", v1), 1), deployed: byHand(rev(2, "deployed", v1), 1), ours: rev(1, "superseded", v1)}, want: stepNone},
		{name: "helm rollback by hand, keep", f: facts{caughtUp: true, outOfBand: watches.OutOfBandKeep, want: v2, latest: byHand(rev(3, "deployed", v1), 1), deployed: byHand(rev(3, "deployed", v1), 1), ours: rev(2, "superseded", v2)}, want: stepNone},
		{name: "by hand, keep, spec changed since: upgrade", f: facts{caughtUp: true, outOfBand: watches.OutOfBandKeep, want: v2, latest: byHand(rev(2, "deployed", v1), 1), deployed: byHand(rev(2, "deployed", v1), 1), ours: rev(1, "superseded", v1)}, want: stepUpgrade},
		{name: "by hand, keep, no revision of rudder's left: upgrade", f: facts{caughtUp: true, outOfBand: watches.OutOfBandKeep, want: v1, latest: byHand(rev(5, "deployed", v1), 1), deployed: byHand(rev(5, "deployed", v1), 1)}, want: stepUpgrade},
		{name: "by hand, revert failing: attempts bounded", f: facts{caughtUp: true, outOfBand: watches.OutOfBandRevert, want: v1, latest: rev(3, "failed", v1), deployed: byHand(rev(2, "deployed", v1), 1), ours: rev(3, "failed", v1), failures: 3}, want: stepHold},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.f.remediation.MaxAttempts == 0 {
				tt.f.remediation = retry
			}
			if got := plan(tt.f); got != tt.want {
				t.Errorf("plan() = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestTestsFailed: only a failed run of the revision rudder made for the
// wanted spec counts, and only when the kind's test.enable is set without
// ignoreFailures.
func TestTestsFailed(t *testing.T) {
	v1 := digests{values: "v1", chart: "c1"}
	v2 := digests{values: "v2", chart: "c1"}
	tested := func(r *storage.Revision, result string) *storage.Revision {
		r.Labels[LabelTest] = result
		return r
	}
	on := watches.Test{Enable: true}
	tests := []struct {
		name string
		f    facts
		t    watches.Test
		want bool
	}{
		{"failed, enabled", facts{want: v1, deployed: tested(rev(1, "deployed", v1), TestFailed)}, on, true},
		{"passed, enabled", facts{want: v1, deployed: tested(rev(1, "deployed", v1), TestPassed)}, on, false},
		{"not tested yet", facts{want: v1, deployed: rev(1, "deployed", v1)}, on, false},
		{"failed, tests run on request only", facts{want: v1, deployed: tested(rev(1, "deployed", v1), TestFailed)}, watches.Test{}, false},
		{"failed, ignoreFailures", facts{want: v1, deployed: tested(rev(1, "deployed", v1), TestFailed)}, watches.Test{Enable: true, IgnoreFailures: true}, false},
		{"failed, but the spec changed since", facts{want: v2, deployed: tested(rev(1, "deployed", v1), TestFailed)}, on, false},
		{"nothing deployed", facts{want: v1}, on, false},
	}
	for _, tt := range tests {
		if got := testsFailed(tt.f, tt.t); got != tt.want {
			t.Errorf("%s: testsFailed = %v, want %v", tt.name, got, tt.want)
		}
	}
}
