package plan

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/rudder-operator/rudder/internal/stored"
	"github.com/rudder-operator/rudder/internal/watches"
)

// helmStatuses are the statuses Helm stores a revision in.
var helmStatuses = []string{
	"deployed", "superseded", "failed", "uninstalled", "uninstalling",
	"pending-install", "pending-upgrade", "pending-rollback", "unknown",
}

// writers are who wrote the newest revision: how its labels read. "alive"
// is the one rudder process other than this one whose Lease is fresh.
var writers = map[string]func(r *stored.Revision) *stored.Revision{
	"rudder, this process":    func(r *stored.Revision) *stored.Revision { return held(r, "me") },
	"rudder, gone":            func(r *stored.Revision) *stored.Revision { return held(r, "gone") },
	"rudder, another running": func(r *stored.Revision) *stored.Revision { return held(r, "alive") },
	"helm CLI, labels kept":   func(r *stored.Revision) *stored.Revision { return byHand(held(r, "gone"), 1) },
	"helm CLI, no labels": func(r *stored.Revision) *stored.Revision {
		return &stored.Revision{Number: r.Number, Status: r.Status, UID: r.UID, Labels: map[string]string{}}
	},
	"forged, rudder's labels written": func(r *stored.Revision) *stored.Revision {
		r = held(r, "me")
		r.Labels[stored.LabelUninstallOf] = r.Labels[stored.LabelRevision]
		r.Signed = false
		return r
	},
}

// histories returns every history of up to three revisions over
// helmStatuses, newest first: more than the helm CLI can produce, so that
// every one it can is among them.
func histories() [][]string {
	out := [][]string{nil}
	prev := [][]string{nil}
	for range 3 {
		var next [][]string
		for _, h := range prev {
			for _, s := range helmStatuses {
				next = append(next, append([]string{s}, h...))
			}
		}
		out = append(out, next...)
		prev = next
	}
	return out
}

// TestPlan_EveryHistory plans every stored history against every policy and
// spec, and checks that each step it picks finds the revisions it reads
// (step.check): no history leads to a step that would dereference a missing
// revision, as `helm uninstall --keep-history` once did.
func TestPlan_EveryHistory(t *testing.T) {
	v1 := Digests{Values: "v1", Chart: "c1"}
	v2 := Digests{Values: "v2", Chart: "c1"}
	type rollbackCase struct {
		to      int
		at, gen int64
	}
	rollbacks := []rollbackCase{{0, -1, 1}, {1, -1, 1}, {1, 2, 2}, {1, 2, 3}}
	type retryCase struct {
		failures int
		retryIn  time.Duration
	}
	retries := []retryCase{{0, 0}, {1, time.Second}, {3, 0}}
	policies := []watches.Remediation{retry, rollback, uninst}
	planned := map[Step]int{}
	checked := 0
	for _, statuses := range histories() {
		for wname, writer := range writers {
			hist := make([]stored.Revision, len(statuses))
			for i, s := range statuses {
				d := v1
				if i == 0 {
					d = v2
				}
				r := rev(len(statuses)-i, s, d)
				if i == 0 {
					r = writer(r)
				}
				hist[i] = *r
			}
			var base Facts
			base.FromHistory(hist)
			base.CaughtUp, base.Self = true, "me"
			base.ForeignUnderWay = base.Foreign != nil && IsPending(base.Foreign.Status)
			base.HolderAlive = base.Latest != nil && base.Latest.Labels[stored.LabelHolder] == "alive" && LeftByRudder(base.Latest, "me")
			for _, rb := range rollbacks {
				for _, rt := range retries {
					for _, pol := range policies {
						for _, oob := range []watches.OutOfBand{watches.OutOfBandRevert, watches.OutOfBandKeep} {
							for _, want := range []Digests{v1, v2} {
								for _, stalled := range []bool{false, true} {
									for _, remFailed := range []bool{false, true} {
										f := base
										f.RollbackTo, f.RolledBackAt, f.Generation = rb.to, rb.at, rb.gen
										f.Failures, f.RetryIn = rt.failures, rt.retryIn
										f.Remediation, f.OutOfBand, f.Want = pol, oob, want
										f.Stalled, f.RemediationFailed = stalled, remFailed
										st := Plan(f)
										planned[st]++
										checked++
										if err := st.Check(f); err != nil {
											t.Fatalf("history %v (newest by %s), facts %+v: %v", statuses, wname, f, err)
										}
										f.DependsErr = notReady
										if waiting := Plan(f); waiting != st && (waiting != StepDepend || st != StepInstall && st != StepReinstall && st != StepUpgrade) {
											t.Fatalf("history %v: planned %s with dependencies not Ready, %s with them Ready; only an install or upgrade waits", statuses, waiting, st)
										}
										f.DependsErr = nil
										if f.HolderAlive && st == StepUnlock {
											t.Fatalf("history %v: unlocked the pending revision of a rudder process that still runs", statuses)
										}
										if len(hist) > 0 && hist[0].Signed && hist[0].Status == "uninstalled" && st != StepInstall && st != StepHold {
											t.Fatalf("history %v: newest revision uninstalled by hand, planned %s; want install (or hold under outOfBand: keep)", statuses, st)
										}
										if len(hist) > 0 && !hist[0].Signed && hist[0].Status != "deployed" && !AwaitsOutOfBand(f) {
											g := f
											g.Latest, g.Deployed, g.Serving, g.EverDeployed, g.Ours, g.Previous, g.Stored = nil, nil, nil, false, nil, nil, 0
											g.FromHistory(hist[1:])
											if without := Plan(g); without != st {
												t.Fatalf("history %v (newest by %s): planned %s, and %s without that revision, which rudder did not sign: it decided",
													statuses, wname, st, without)
											}
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
	// The steps that stop before the history matters.
	for _, f := range []Facts{
		{Deleting: true}, {Paused: true}, {CaughtUp: false},
		{CaughtUp: true, ValuesErr: errors.New("x")}, {CaughtUp: true, HookErr: errors.New("x")},
		{CaughtUp: true, RollbackErr: errors.New("x")},
	} {
		st := Plan(f)
		planned[st]++
		if err := st.Check(f); err != nil {
			t.Fatalf("facts %+v: %v", f, err)
		}
	}
	t.Logf("%d plans checked; steps: %s", checked, fmt.Sprint(planned))
	for _, st := range []Step{StepUninstall, StepPaused, StepWait, StepInvalid, StepBlocked, StepUnlock, StepInstall, StepReinstall,
		StepUpgrade, StepHold, StepNone, StepRollback, StepRollbackDone, StepRemediate, StepDropInstall} {
		if planned[st] == 0 {
			t.Errorf("no history led to step %s: the table misses a case", st)
		}
	}
}
