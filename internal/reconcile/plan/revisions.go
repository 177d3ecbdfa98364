package plan

import (
	"strconv"
	"strings"
	"time"

	"github.com/rudder-operator/rudder/internal/stored"
	"github.com/rudder-operator/rudder/internal/watches"
)

// FromHistory sets the facts read from a release's history, newest first.
// Its revisions not Signed are as if not stored, but for Serving and Stored:
// a revision another Helm client wrote, or that someone forged, is neither a
// lock, nor the base of an upgrade, nor a rollback target.
func (f *Facts) FromHistory(hist []stored.Revision) {
	signed := make([]stored.Revision, 0, len(hist))
	for i := range hist {
		h := &hist[i]
		f.Stored = max(f.Stored, h.Number)
		if h.Undecodable {
			continue
		}
		if f.Serving == nil && h.Status == "deployed" {
			f.Serving = h
		}
		if !h.Signed {
			if f.Latest == nil && f.Foreign == nil {
				f.Foreign = h
			}
			continue
		}
		signed = append(signed, *h)
		if f.Latest == nil {
			f.Latest = h
		}
		if f.Deployed == nil && h.Status == "deployed" {
			f.Deployed = h
		}
		if h.Status == "deployed" || h.Status == "superseded" {
			f.EverDeployed = true
		}
	}
	f.Ours = f.Latest
	f.Previous = PreviousDeployed(signed, f.Deployed)
	if f.Previous != nil { // point into hist, as every other fact does
		for i := range hist {
			if hist[i].UID == f.Previous.UID {
				f.Previous = &hist[i]
			}
		}
	}
}

// Assessed returns the revision whose objects readiness and drift are
// assessed against: the deployed one rudder signed, or, while outOfBand:
// keep holds another Helm client's, that one. Nil when none.
func Assessed(f Facts) *stored.Revision {
	if KeepsOutOfBand(f) {
		return f.Serving
	}
	return f.Deployed
}

// ServedOutOfBand reports whether the serving revision was written by
// another Helm client (or forged): not signed by rudder for the resource.
func ServedOutOfBand(f Facts) bool {
	return f.Serving != nil && !f.Serving.Signed
}

// FailedRevision returns r when it failed, else nil.
func FailedRevision(r *stored.Revision) *stored.Revision {
	if r == nil || r.Status != "failed" {
		return nil
	}
	return r
}

// WrittenByRudder reports whether rudder wrote rev for the resource: it is
// signed (package signature). helm upgrade and helm rollback copy an older
// revision's labels, rudder's signature included, which then does not
// verify: it signs the revision's number.
func WrittenByRudder(rev *stored.Revision) bool {
	return rev != nil && rev.Signed
}

// KeepsOutOfBand reports whether the deployed revision, written by another
// Helm client, stays: the kind says outOfBand: keep and the spec and chart
// are those rudder last deployed. With no revision of rudder's left to
// compare with, rudder upgrades to the spec.
func KeepsOutOfBand(f Facts) bool {
	return ServedOutOfBand(f) && f.OutOfBand == watches.OutOfBandKeep &&
		f.Ours != nil && DigestsOf(f.Ours) == f.Want
}

// RemediationTarget returns the revision a rollback remediating the wanted
// spec goes back to, nil when the kind's policy or the history allows none:
// for a revision not Ready in time or failing its tests, the one deployed before it; for failed
// upgrade attempts, the deployed one, and only when the last attempt stored a
// revision (which may have changed objects; a render error changed nothing).
// One failed remediation ends remediation for these digests.
func RemediationTarget(f Facts) *stored.Revision {
	if f.Remediation.Strategy != watches.StrategyRollback || f.RemediationFailed || f.Deployed == nil {
		return nil
	}
	if f.Stalled || f.TestFailed {
		return f.Previous
	}
	if l := f.Latest; l != nil && l.Status == "failed" && l.Number > f.Deployed.Number && DigestsOf(l) == f.Want {
		return f.Deployed
	}
	return nil
}

// HeldAfterRemediation reports whether the deployed revision is a rollback
// rudder made because the wanted digests failed: it stays until they change.
func HeldAfterRemediation(f Facts) bool {
	d := f.Deployed
	return WrittenByRudder(d) && d.Labels[stored.LabelFailedValuesDigest] != "" && d.Labels[stored.LabelFailedValuesDigest] == f.Want.Values &&
		d.Labels[stored.LabelFailedChartDigest] == f.Want.Chart
}

// PreviousDeployed returns the newest revision older than deployed that was
// deployed once (Helm marks it superseded); nil when none is stored.
func PreviousDeployed(history []stored.Revision, deployed *stored.Revision) *stored.Revision {
	for i := range history {
		if deployed != nil && history[i].Number < deployed.Number && history[i].Status == "superseded" {
			return &history[i]
		}
	}
	return nil
}

// LeftByRudder reports whether rev, pending, is an operation a rudder process
// started and that nobody is finishing, rather than one another writer has
// in flight. Only a revision rudder signed can be: helm upgrade and helm
// rollback write unsigned ones. Helm's uninstall, though, marks the newest
// revision uninstalling in place, signature and all: rudder's own uninstall
// of a release its resource still wants carries its number in
// LabelUninstallOf. A deleted resource's uninstall needs no mark: its
// uninstall step runs it again.
//
// Held by this process (self), it is left: the reconciles of one resource
// never overlap and each Helm action ends within its reconcile, so an
// operation of ours still pending is one whose end Helm could not record
// (the API server went away mid-action). Held by another process, it is
// left only when that process is gone too (Facts.HolderAlive).
func LeftByRudder(rev *stored.Revision, self string) bool {
	if !rev.Signed || rev.Labels[stored.LabelHolder] == "" {
		return false
	}
	switch rev.Status {
	case "pending-install", "pending-upgrade", "pending-rollback":
		return true
	case "uninstalling":
		return rev.Labels[stored.LabelUninstallOf] == strconv.Itoa(rev.Number)
	default:
		return false
	}
}

// AwaitsOutOfBand reports whether another Helm client's operation is under
// way over the release, and the spec asks nothing of rudder meanwhile: the
// newest revision, not signed, is pending over rudder's newest, which that
// operation superseded, and the spec and chart are those rudder last wrote.
// rudder then waits for it to end. It is no lock: a change of the spec goes
// on at once; and only a writer that may change rudder's revisions (the
// helm CLI run with rights on Secrets) can supersede one.
func AwaitsOutOfBand(f Facts) bool {
	return f.Foreign != nil && f.ForeignUnderWay && f.Deployed == nil &&
		f.Latest != nil && f.Latest.Status == "superseded" && DigestsOf(f.Latest) == f.Want
}

// HoldsRepair reports whether drift repair waits: the kind keeps another
// Helm client's revisions serving (outOfBand: keep), and such a client's
// operation may be under way (ForeignUnderWay), whose changes are its own,
// not drift. Under revert, rudder puts back what the spec says either way.
func HoldsRepair(f Facts) bool {
	return f.ForeignUnderWay && f.OutOfBand == watches.OutOfBandKeep
}

// ForeignOperationTimeout bounds how long a pending revision rudder did not
// sign counts as another Helm client's operation under way: twice Helm's
// default --timeout. A forged one then holds nothing back any more.
const ForeignOperationTimeout = 10 * time.Minute

// UnderWay reports whether rev, a revision rudder did not sign, is an
// operation another Helm client may still be running at now.
func UnderWay(rev *stored.Revision, now time.Time) bool {
	return rev != nil && IsPending(rev.Status) && now.Sub(rev.Created) < ForeignOperationTimeout
}

// IsPending reports whether a Helm status means an operation is under way
// (pending-install, pending-upgrade, pending-rollback, uninstalling).
func IsPending(status string) bool {
	return strings.HasPrefix(status, "pending-") || status == "uninstalling"
}

// Upgradable reports whether Helm upgrades a release whose newest revision
// has status, when none is deployed.
func Upgradable(status string) bool {
	return status == "failed" || status == "superseded"
}

// Stuck reports whether f's release is in a state no step of rudder's
// leaves: none deployed, and a newest revision Helm cannot upgrade from (a
// status such as "unknown" that only another client can store).
func Stuck(f Facts) bool {
	return f.Deployed == nil && f.Latest != nil && f.EverDeployed && !Upgradable(f.Latest.Status) &&
		!IsPending(f.Latest.Status) && f.Latest.Status != "uninstalled"
}

// KeepsUninstall reports whether an uninstall by another Helm client that
// kept the history stays: the kind says outOfBand: keep and the spec and chart
// are those rudder last deployed. A change of either installs again.
func KeepsUninstall(f Facts) bool {
	return f.OutOfBand == watches.OutOfBandKeep && f.Ours != nil && DigestsOf(f.Ours) == f.Want
}

// AwaitsTest reports whether the deployed revision is one the kind's
// test.enable tests and it has not been tested.
func AwaitsTest(f Facts) bool {
	return DeploysWanted(f) && f.Deployed.Labels[stored.LabelTest] == ""
}

// DeploysWanted reports whether the deployed revision is one rudder made for
// the wanted spec and chart.
func DeploysWanted(f Facts) bool {
	d := f.Deployed
	return d != nil && WrittenByRudder(d) && DigestsOf(d) == f.Want
}

// FailedTests reports whether a run that passed or not counts as a failed
// upgrade under the kind's test policy (test.enable without ignoreFailures).
func FailedTests(passed bool, t watches.Test) bool {
	return !passed && t.Enable && !t.IgnoreFailures
}

// TestsFailed reports whether the deployed revision, made by rudder for the
// wanted spec, failed its last test run and the kind counts that as a failed
// upgrade.
func TestsFailed(f Facts, t watches.Test) bool {
	return DeploysWanted(f) && f.Deployed.Labels[stored.LabelTest] != "" && FailedTests(f.Deployed.Labels[stored.LabelTest] == stored.TestPassed, t)
}

// ReadinessLeft returns how long a revision deployed at deployed has left to
// become Ready under the kind's readiness timeout at now; 0 when the kind
// has no timeout, the time is unknown or the timeout has passed.
func ReadinessLeft(deployed time.Time, timeout time.Duration, now time.Time) time.Duration {
	if timeout == 0 || deployed.IsZero() {
		return 0
	}
	return max(0, deployed.Add(timeout).Sub(now))
}
