package plan

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/rudder-operator/rudder/internal/depends"
	"github.com/rudder-operator/rudder/internal/stored"
	"github.com/rudder-operator/rudder/internal/watches"
)

// rev is a revision rudder wrote, signed.
func rev(n int, status string, d Digests) *stored.Revision {
	return &stored.Revision{Number: n, Status: status, UID: types.UID(fmt.Sprint("uid-", n)), Signed: true, Labels: map[string]string{
		stored.LabelValuesDigest: d.Values, stored.LabelChartDigest: d.Chart, stored.LabelRevision: strconv.Itoa(n),
	}}
}

// byHand is r as helm upgrade or helm rollback writes it: with the labels of
// revision `from` copied, rudder's signature among them, which does not hold
// for r's number.
func byHand(r *stored.Revision, from int) *stored.Revision {
	r.Labels[stored.LabelRevision] = strconv.Itoa(from)
	r.Signed = false
	return r
}

// copiedFrom is r, a rollback rudder made to revision `from`: Helm copied
// that revision's labels, and rudder signed it.
func copiedFrom(r *stored.Revision, from int) *stored.Revision {
	r.Labels[stored.LabelRevision] = strconv.Itoa(from)
	return r
}

// history returns f with the facts of hist, newest first, as observed.
func history(f Facts, hist ...*stored.Revision) Facts {
	revs := make([]stored.Revision, len(hist))
	for i, r := range hist {
		revs[i] = *r
	}
	f.FromHistory(revs)
	return f
}

// remediating marks r as a rollback made because digests d failed.
func remediating(r *stored.Revision, d Digests) *stored.Revision {
	r.Labels[stored.LabelFailedValuesDigest], r.Labels[stored.LabelFailedChartDigest] = d.Values, d.Chart
	return r
}

var (
	retry    = watches.Remediation{Strategy: watches.StrategyRetry, MaxAttempts: 3}
	rollback = watches.Remediation{Strategy: watches.StrategyRollback, MaxAttempts: 3}
	uninst   = watches.Remediation{Strategy: watches.StrategyRetry, MaxAttempts: 3, InstallFailure: watches.InstallFailureUninstall}
)

// rollingBackAs is r with the LabelRollbackAs rudder puts on a rollback's
// target, copied by Helm.
func rollingBackAs(r *stored.Revision, n int) *stored.Revision {
	r.Labels[stored.LabelRollbackAs] = strconv.Itoa(n)
	return r
}

// uninstallOf is r with the LabelUninstallOf rudder puts on revision n before
// it uninstalls a release its resource still wants.
func uninstallOf(r *stored.Revision, n int) *stored.Revision {
	r.Labels[stored.LabelUninstallOf] = strconv.Itoa(n)
	return r
}

func held(r *stored.Revision, holder string) *stored.Revision {
	r.Labels[stored.LabelHolder] = holder
	return r
}

// notReady is what depends.Kinds.Check says of a dependency not Ready.
var notReady = &depends.Error{Reason: depends.ReasonNotReady, Message: "Waiting for Database orders to exist"}

func TestPlan(t *testing.T) {
	v1 := Digests{Values: "v1", Chart: "c1"}
	v2 := Digests{Values: "v2", Chart: "c1"}
	c2 := Digests{Values: "v1", Chart: "c2"}
	tests := []struct {
		name string
		f    Facts
		want Step
	}{
		{name: "deleting wins over everything", f: Facts{Deleting: true, CaughtUp: false, ValuesErr: errors.New("x")}, want: StepUninstall},
		{name: "storage behind our last action", f: Facts{Want: v1}, want: StepWait},
		{name: "rollback asked", f: Facts{CaughtUp: true, Want: v2, RollbackTo: 1, RolledBackAt: -1, Latest: rev(2, "deployed", v2), Deployed: rev(2, "deployed", v2)}, want: StepRollback},
		{name: "rolled back: held though the spec differs", f: Facts{CaughtUp: true, Want: v2, Generation: 3, RollbackTo: 1, RolledBackAt: 3, Latest: rev(3, "deployed", v1), Deployed: rev(3, "deployed", v1)}, want: StepNone},
		{name: "spec changed after the rollback", f: Facts{CaughtUp: true, Want: v2, Generation: 4, RollbackTo: 1, RolledBackAt: 3, Latest: rev(3, "deployed", v1), Deployed: rev(3, "deployed", v1)}, want: StepRollbackDone},
		{name: "rollback annotation not a number", f: Facts{CaughtUp: true, Want: v1, RollbackErr: errors.New("x")}, want: StepInvalid},
		{name: "paused, with a change waiting", f: Facts{CaughtUp: true, Paused: true, Want: v2, Latest: rev(1, "deployed", v1), Deployed: rev(1, "deployed", v1)}, want: StepPaused},
		{name: "paused but deleted", f: Facts{Deleting: true, Paused: true}, want: StepUninstall},
		{name: "values cannot be computed", f: Facts{CaughtUp: true, ValuesErr: errors.New("bad override")}, want: StepInvalid},
		{name: "nothing stored", f: Facts{CaughtUp: true, Want: v1}, want: StepInstall},
		{name: "a hook failed", f: Facts{CaughtUp: true, Want: v1, HookErr: errors.New("cannot create Secret")}, want: StepBlocked},
		{name: "deployed with wanted digests", f: Facts{CaughtUp: true, Want: v1, Latest: rev(1, "deployed", v1), Deployed: rev(1, "deployed", v1)}, want: StepNone},
		{name: "values changed", f: Facts{CaughtUp: true, Want: v2, Latest: rev(1, "deployed", v1), Deployed: rev(1, "deployed", v1)}, want: StepUpgrade},
		{name: "an install waits for a dependency", f: Facts{CaughtUp: true, Want: v1, DependsErr: notReady}, want: StepDepend},
		{name: "an upgrade waits for a dependency", f: Facts{CaughtUp: true, Want: v2, DependsErr: notReady, Latest: rev(1, "deployed", v1), Deployed: rev(1, "deployed", v1)}, want: StepDepend},
		{name: "a release up to date is maintained whatever its dependencies", f: Facts{CaughtUp: true, Want: v1, DependsErr: notReady, Latest: rev(1, "deployed", v1), Deployed: rev(1, "deployed", v1)}, want: StepNone},
		{name: "a deletion does not wait for dependencies", f: Facts{Deleting: true, DependsErr: notReady}, want: StepUninstall},
		{name: "chart changed", f: Facts{CaughtUp: true, Want: c2, Latest: rev(1, "deployed", v1), Deployed: rev(1, "deployed", v1)}, want: StepUpgrade},
		{name: "pending, held by another writer", f: Facts{CaughtUp: true, Want: v2, Latest: rev(2, "pending-upgrade", v2), Deployed: rev(1, "deployed", v1)}, want: StepWait},
		// Our own Helm action ended without recording its end (the API server went away).
		{name: "pending, held by this process", f: Facts{CaughtUp: true, Self: "me", Want: v2, Latest: held(rev(2, "pending-upgrade", v2), "me"), Deployed: rev(1, "deployed", v1)}, want: StepUnlock},
		{name: "pending, held by another process that runs", f: Facts{CaughtUp: true, Self: "me", HolderAlive: true, Want: v2, Latest: held(rev(2, "pending-upgrade", v2), "peer"), Deployed: rev(1, "deployed", v1)}, want: StepWait},
		{name: "pending, left by a rudder that is gone", f: Facts{CaughtUp: true, Self: "me", Want: v2, Latest: held(rev(2, "pending-install", v2), "gone")}, want: StepUnlock},
		// A revision rudder did not sign is no lock: the spec goes on as if it were not stored.
		{name: "pending upgrade by hand, rudder's labels copied: no lock", f: history(Facts{CaughtUp: true, Self: "me", Want: v2},
			byHand(held(rev(2, "pending-upgrade", v1), "gone"), 1), rev(1, "deployed", v1)), want: StepUpgrade},
		{name: "pending upgrade forged over an up-to-date release: no lock", f: history(Facts{CaughtUp: true, Self: "me", Want: v1},
			byHand(held(rev(2, "pending-upgrade", v1), "me"), 2), rev(1, "deployed", v1)), want: StepNone},
		{name: "helm upgrade by hand under way over rudder's revision, spec unchanged: waited for", f: history(Facts{CaughtUp: true, Self: "me", Want: v1, ForeignUnderWay: true},
			byHand(rev(2, "pending-upgrade", v1), 1), rev(1, "superseded", v1)), want: StepWait},
		{name: "helm upgrade by hand pending for longer than any operation runs: no lock", f: history(Facts{CaughtUp: true, Self: "me", Want: v1},
			byHand(rev(2, "pending-upgrade", v1), 1), rev(1, "superseded", v1)), want: StepUpgrade},
		{name: "helm upgrade by hand under way over rudder's revision, spec changed: no lock", f: history(Facts{CaughtUp: true, Self: "me", Want: v2, ForeignUnderWay: true},
			byHand(rev(2, "pending-upgrade", v1), 1), rev(1, "superseded", v1)), want: StepUpgrade},
		{name: "pending rollback left by a rudder that is gone", f: Facts{CaughtUp: true, Self: "me", Want: v2, Latest: rollingBackAs(copiedFrom(held(rev(3, "pending-rollback", v1), "gone"), 1), 3), Deployed: rev(2, "deployed", v2)}, want: StepUnlock},
		{name: "pending rollback by hand, rudder's labels copied: no lock", f: history(Facts{CaughtUp: true, Self: "me", Want: v2},
			byHand(held(rev(3, "pending-rollback", v1), "gone"), 1), rev(2, "deployed", v2)), want: StepNone},
		{name: "pending rollback by hand to a revision rudder rolled back to before: no lock", f: history(Facts{CaughtUp: true, Self: "me", Want: v2},
			rollingBackAs(byHand(held(rev(5, "pending-rollback", v1), "gone"), 1), 3), rev(4, "deployed", v2)), want: StepNone},
		{name: "rollback by rudder, stopped before relabeling it: not out of band", f: Facts{CaughtUp: true, Self: "me", Want: v1, Latest: rollingBackAs(copiedFrom(rev(3, "deployed", v1), 1), 3), Deployed: rollingBackAs(copiedFrom(rev(3, "deployed", v1), 1), 3)}, want: StepNone},
		{name: "rollback by hand to the same revision: out of band", f: history(Facts{CaughtUp: true, Self: "me", Want: v1},
			byHand(rev(3, "deployed", v1), 1), rev(2, "superseded", v2), rev(1, "superseded", v1)), want: StepUpgrade},
		{name: "uninstall by hand of a revision rudder wrote", f: Facts{CaughtUp: true, Self: "me", Want: v2, Latest: held(rev(2, "uninstalling", v2), "gone"), Deployed: rev(1, "superseded", v1)}, want: StepWait},
		{name: "reinstall's uninstall left by a rudder that is gone", f: Facts{CaughtUp: true, Self: "me", Want: v2, Latest: uninstallOf(held(rev(1, "uninstalling", v1), "gone"), 1)}, want: StepUnlock},
		{name: "reinstall's uninstall left by this process", f: Facts{CaughtUp: true, Self: "me", Want: v2, Latest: uninstallOf(held(rev(1, "uninstalling", v1), "me"), 1)}, want: StepUnlock},
		{name: "reinstall's uninstall by a rudder that runs", f: Facts{CaughtUp: true, Self: "me", HolderAlive: true, Want: v2, Latest: uninstallOf(held(rev(1, "uninstalling", v1), "peer"), 1)}, want: StepWait},
		{name: "uninstalling by hand a revision helm upgrade wrote, rudder's uninstall mark copied: no lock", f: history(Facts{CaughtUp: true, Self: "me", Want: v2},
			uninstallOf(byHand(held(rev(3, "uninstalling", v2), "gone"), 2), 2), rev(2, "deployed", v2)), want: StepNone},
		{name: "first install failed, spec changed", f: Facts{CaughtUp: true, Want: v2, Latest: rev(1, "failed", v1)}, want: StepReinstall},
		{name: "upgrade canceled half-way, none deployed", f: Facts{CaughtUp: true, Want: v2, Latest: rev(2, "failed", v2), EverDeployed: true, Failures: 1}, want: StepUpgrade},
		{name: "failed upgrade, spec reverted to deployed", f: Facts{CaughtUp: true, Want: v1, Latest: rev(2, "failed", v2), Deployed: rev(1, "deployed", v1), Failures: 3}, want: StepNone},
		{name: "retry after backoff", f: Facts{CaughtUp: true, Want: v2, Latest: rev(2, "failed", v2), Deployed: rev(1, "deployed", v1), Failures: 1}, want: StepUpgrade},
		{name: "backoff not over", f: Facts{CaughtUp: true, Want: v2, Latest: rev(2, "failed", v2), Deployed: rev(1, "deployed", v1), Failures: 1, RetryIn: time.Second}, want: StepWait},
		{name: "retries exhausted", f: Facts{CaughtUp: true, Want: v2, Latest: rev(4, "failed", v2), Deployed: rev(1, "deployed", v1), Failures: 3}, want: StepHold},
		{name: "install failed with no revision, retries exhausted", f: Facts{CaughtUp: true, Want: v1, Failures: 3}, want: StepHold},

		// Remediation.
		{name: "rollback strategy: attempts left, retry", f: Facts{CaughtUp: true, Remediation: rollback, Want: v2, Latest: rev(2, "failed", v2), Deployed: rev(1, "deployed", v1), Failures: 2}, want: StepUpgrade},
		{name: "rollback strategy: last attempt stored a failed revision, roll back", f: Facts{CaughtUp: true, Remediation: rollback, Want: v2, Latest: rev(3, "failed", v2), Deployed: rev(1, "deployed", v1), Failures: 3}, want: StepRemediate},
		{name: "rollback strategy: render errors stored nothing, hold", f: Facts{CaughtUp: true, Remediation: rollback, Want: v2, Latest: rev(1, "deployed", v1), Deployed: rev(1, "deployed", v1), Failures: 3}, want: StepHold},
		{name: "rollback strategy: failed revision of an older spec, hold", f: Facts{CaughtUp: true, Remediation: rollback, Want: c2, Latest: rev(2, "failed", v2), Deployed: rev(1, "deployed", v1), Failures: 3}, want: StepHold},
		{name: "rollback strategy: the remediating rollback failed, hold", f: Facts{CaughtUp: true, Remediation: rollback, RemediationFailed: true, Want: v2, Latest: rev(3, "failed", v2), Deployed: rev(1, "deployed", v1), Failures: 4}, want: StepHold},
		{name: "retry strategy: attempts exhausted, hold", f: Facts{CaughtUp: true, Remediation: retry, Want: v2, Latest: rev(3, "failed", v2), Deployed: rev(1, "deployed", v1), Failures: 3}, want: StepHold},
		{name: "not Ready in time, rollback: back to the previous revision", f: Facts{CaughtUp: true, Remediation: rollback, Stalled: true, Want: v2, Latest: rev(2, "deployed", v2), Deployed: rev(2, "deployed", v2), Previous: rev(1, "superseded", v1)}, want: StepRemediate},
		{name: "not Ready in time, rollback, no previous revision", f: Facts{CaughtUp: true, Remediation: rollback, Stalled: true, Want: v2, Latest: rev(1, "deployed", v2), Deployed: rev(1, "deployed", v2)}, want: StepNone},
		{name: "failed its tests, rollback: back to the previous revision", f: Facts{CaughtUp: true, Remediation: rollback, TestFailed: true, Want: v2, Latest: rev(2, "deployed", v2), Deployed: rev(2, "deployed", v2), Previous: rev(1, "superseded", v1)}, want: StepRemediate},
		{name: "failed its tests, rollback, no previous revision: held", f: Facts{CaughtUp: true, Remediation: rollback, TestFailed: true, Want: v2, Latest: rev(1, "deployed", v2), Deployed: rev(1, "deployed", v2)}, want: StepNone},
		{name: "failed its tests, retry: left serving", f: Facts{CaughtUp: true, Remediation: retry, TestFailed: true, Want: v2, Latest: rev(2, "deployed", v2), Deployed: rev(2, "deployed", v2), Previous: rev(1, "superseded", v1)}, want: StepNone},
		{name: "not Ready in time, retry: left serving", f: Facts{CaughtUp: true, Remediation: retry, Stalled: true, Want: v2, Latest: rev(2, "deployed", v2), Deployed: rev(2, "deployed", v2), Previous: rev(1, "superseded", v1)}, want: StepNone},
		{name: "rolled back after a failure: held", f: Facts{CaughtUp: true, Remediation: rollback, Want: v2, Latest: rev(3, "deployed", v1), Deployed: remediating(rev(3, "deployed", v1), v2), Previous: rev(2, "superseded", v2)}, want: StepNone},
		{name: "rolled back after a failure, spec changed: upgrade", f: Facts{CaughtUp: true, Remediation: rollback, Want: c2, Latest: rev(3, "deployed", v1), Deployed: remediating(rev(3, "deployed", v1), v2)}, want: StepUpgrade},
		{name: "failed install, policy keep: reinstall", f: Facts{CaughtUp: true, Remediation: retry, Want: v1, Latest: rev(1, "failed", v1), Failures: 1}, want: StepReinstall},
		{name: "failed install, policy uninstall", f: Facts{CaughtUp: true, Remediation: uninst, Want: v1, Latest: rev(1, "failed", v1), Failures: 1, RetryIn: time.Second}, want: StepDropInstall},
		{name: "failed install, policy uninstall, attempts exhausted: still uninstalled", f: Facts{CaughtUp: true, Remediation: uninst, Want: v1, Latest: rev(1, "failed", v1), Failures: 3}, want: StepDropInstall},
		{name: "failed install uninstalled, backoff", f: Facts{CaughtUp: true, Remediation: uninst, Want: v1, Failures: 1, RetryIn: time.Second}, want: StepWait},

		// Out-of-band Helm: the revision serves, but the upgrade back to the spec rests on rudder's.
		{name: "helm upgrade by hand, revert", f: history(Facts{CaughtUp: true, OutOfBand: watches.OutOfBandRevert, Want: v1},
			byHand(rev(2, "deployed", v1), 1), rev(1, "superseded", v1)), want: StepUpgrade},
		{name: "helm rollback by hand, revert", f: history(Facts{CaughtUp: true, OutOfBand: watches.OutOfBandRevert, Want: v2},
			byHand(rev(3, "deployed", v1), 1), rev(2, "superseded", v2), rev(1, "superseded", v1)), want: StepUpgrade},
		{name: "helm upgrade by hand, keep", f: history(Facts{CaughtUp: true, OutOfBand: watches.OutOfBandKeep, Want: v1},
			byHand(rev(2, "deployed", v1), 1), rev(1, "superseded", v1)), want: StepNone},
		{name: "helm rollback by hand, keep", f: history(Facts{CaughtUp: true, OutOfBand: watches.OutOfBandKeep, Want: v2},
			byHand(rev(3, "deployed", v1), 1), rev(2, "superseded", v2), rev(1, "superseded", v1)), want: StepNone},
		{name: "by hand, keep, spec changed since: upgrade", f: history(Facts{CaughtUp: true, OutOfBand: watches.OutOfBandKeep, Want: v2},
			byHand(rev(2, "deployed", v1), 1), rev(1, "superseded", v1)), want: StepUpgrade},
		{name: "by hand, keep, no revision of rudder's left: installed as if none were stored", f: history(Facts{CaughtUp: true, OutOfBand: watches.OutOfBandKeep, Want: v1},
			byHand(rev(5, "deployed", v1), 1)), want: StepInstall},
		{name: "by hand, revert failing: attempts bounded", f: history(Facts{CaughtUp: true, OutOfBand: watches.OutOfBandRevert, Want: v1, Failures: 3},
			rev(3, "failed", v1), byHand(rev(2, "deployed", v1), 1), rev(1, "superseded", v1)), want: StepHold},
		{name: "forged deployed revision over rudder's: upgraded from rudder's, as if it were not stored", f: history(Facts{CaughtUp: true, Want: v1},
			byHand(rev(3, "deployed", v2), 3), rev(2, "deployed", v1)), want: StepUpgrade},
		{name: "forged revisions only: installed", f: history(Facts{CaughtUp: true, Want: v1},
			byHand(rev(2, "pending-install", v1), 2), byHand(rev(1, "deployed", v1), 1)), want: StepInstall},

		// rudder acts as no one for a resource whose account is refused: not even to uninstall it.
		{name: "account refused", f: Facts{CaughtUp: true, Want: v1, ActorErr: errors.New("x"), ValuesErr: errors.New("x")}, want: StepInvalid},
		{name: "account refused, deleting: held", f: Facts{Deleting: true, ActorErr: errors.New("x"), ValuesErr: errors.New("x")}, want: StepInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.f.Remediation.MaxAttempts == 0 {
				tt.f.Remediation = retry
			}
			if got := Plan(tt.f); got != tt.want {
				t.Errorf("plan() = %s, want %s", got, tt.want)
			}
		})
	}
}
