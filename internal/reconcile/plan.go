package reconcile

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rudder-operator/rudder/internal/depends"
	"github.com/rudder-operator/rudder/internal/storage"
	"github.com/rudder-operator/rudder/internal/watches"
)

// step is the one thing a reconcile does to a release.
type step string

const (
	stepUninstall    step = "uninstall"     // the custom resource is being deleted
	stepInvalid      step = "invalid"       // its values cannot be computed: wait for a spec change
	stepBlocked      step = "blocked"       // a hook failed: retry it with backoff, touch no release
	stepWait         step = "wait"          // another writer's operation is pending, or storage has not caught up with ours
	stepUnlock       step = "unlock"        // a rudder process that is gone left the newest revision pending
	stepInstall      step = "install"       // nothing is stored yet
	stepReinstall    step = "reinstall"     // no revision was ever deployed (none is superseded) and the last try failed
	stepUpgrade      step = "upgrade"       // the deployed revision's values or chart are not the wanted ones
	stepHold         step = "hold"          // these values and this chart failed too often: wait for a change
	stepNone         step = "none"          // the release is up to date: repair drift, assess readiness
	stepPaused       step = "paused"        // the user paused the resource: assess, touch nothing
	stepRollback     step = "rollback"      // the annotation asks for a revision not rolled back to yet
	stepRollbackDone step = "rollback-done" // the spec changed after a rollback: clear its annotation
	stepRemediate    step = "remediate"     // the spec failed: roll back to the last deployed revision, then hold
	stepDropInstall  step = "drop-install"  // an install failed and the kind's installFailure says uninstall it
	stepDepend       step = "depend"        // an install or upgrade waits for the resources it depends on
	stepGated        step = "gated"         // a hook holds the upgrade until it has done something first (a backup)
)

// writesRevision reports whether step st runs a Helm action that stores a
// revision, pending until the action ends: the process's Lease is held
// while it runs (Reconciler.Lease), so that no other process unlocks it.
func (st step) writesRevision() bool {
	switch st {
	case stepInstall, stepReinstall, stepUpgrade, stepUninstall, stepRollback, stepRemediate, stepDropInstall:
		return true
	}
	return false
}

// digests identify what a revision was made from.
type digests struct{ values, chart string }

func digestsOf(rev *storage.Revision) digests {
	return digests{values: rev.Labels[LabelValuesDigest], chart: rev.Labels[LabelChartDigest]}
}

// facts are what plan decides from, all observed before any action.
type facts struct {
	deleting  bool
	paused    bool
	valuesErr error
	hookErr   error // the first hook that failed, which blocks any Helm step
	want      digests
	latest    *storage.Revision // newest stored revision, nil when none
	deployed  *storage.Revision // newest deployed revision, nil when none
	// everDeployed is set when a stored revision is or was deployed: an
	// upgrade canceled half-way (SIGTERM) can leave none deployed, and such
	// a release is upgraded (Helm upgrades from the last failed revision),
	// never uninstalled and installed again.
	everDeployed bool
	caughtUp     bool          // storage shows the result of our last action
	failures     int           // failed tries for `want` in a row
	retryIn      time.Duration // time left before the next try is allowed
	self         string        // this process's LabelHolder value
	// holderAlive is set when the newest revision is pending, left by
	// another rudder process, and that process still holds its Lease.
	holderAlive bool

	generation  int64 // the custom resource's metadata.generation
	rollbackTo  int   // the revision AnnotationRollbackTo asks for; 0 when none
	rollbackErr error // the annotation is not a revision number
	// rolledBackAt is the generation at which the newest revision made for
	// rollbackTo was asked for; -1 when no such revision is stored.
	rolledBackAt int64

	// The kind's policies (watches.yaml). remediation.MaxAttempts bounds the
	// tries for one pair of digests, so that a release that cannot succeed
	// never piles up failed revisions.
	remediation watches.Remediation
	outOfBand   watches.OutOfBand

	ours              *storage.Revision // newest revision rudder wrote, nil when none
	previous          *storage.Revision // newest revision deployed before `deployed`, nil when none
	stalled           bool              // `deployed` did not become Ready within remediation.readinessTimeout
	testFailed        bool              // `deployed` failed its chart tests, which the kind counts (test.enable)
	remediationFailed bool              // a rollback remediating `want` failed: try no other

	// dependsErr holds back an install or upgrade: a resource named by the
	// depends-on annotation is not Ready, they form a cycle, or the
	// annotation is malformed (a *depends.Error).
	dependsErr error
}

// plan picks the step for the observed facts.
func plan(f facts) step {
	st := planRelease(f)
	if f.dependsErr != nil && (st == stepInstall || st == stepReinstall || st == stepUpgrade) {
		return stepDepend
	}
	return st
}

// planRelease picks the step for the observed facts, dependencies aside.
func planRelease(f facts) step {
	switch {
	case f.deleting:
		return stepUninstall
	case f.paused:
		return stepPaused
	case !f.caughtUp:
		return stepWait
	case f.valuesErr != nil:
		return stepInvalid
	case f.hookErr != nil:
		return stepBlocked
	case f.latest != nil && isPending(f.latest.Status):
		if leftByRudder(f.latest, f.self) && !f.holderAlive {
			return stepUnlock
		}
		return stepWait // another writer's, or a live rudder's: theirs to finish
	case f.latest != nil && f.latest.Status == "uninstalled":
		// Another Helm client ran `helm uninstall --keep-history`.
		if keepsUninstall(f) {
			return stepHold
		}
		return stepInstall // Helm's install --replace, numbering on from the history
	case f.rollbackErr != nil:
		return stepInvalid
	case f.rollbackTo > 0 && f.rolledBackAt < 0 && f.latest != nil: // with nothing stored, install first
		if f.failures >= f.remediation.MaxAttempts {
			return stepHold
		}
		if f.retryIn > 0 {
			return stepWait
		}
		return stepRollback
	case f.rollbackTo > 0 && f.generation > f.rolledBackAt:
		return stepRollbackDone
	case f.rollbackTo > 0 && f.deployed != nil:
		return stepNone // held on the rolled-back revision
	case f.deployed == nil && f.latest != nil && f.latest.Status == "failed" &&
		f.remediation.InstallFailure == watches.InstallFailureUninstall:
		return stepDropInstall
	case f.deployed != nil && keepsOutOfBand(f):
		return stepNone // held on another Helm client's revision
	case f.deployed != nil && heldAfterRemediation(f):
		return stepNone // held on the rollback made after `want` failed
	case f.deployed != nil && writtenByRudder(f.deployed) && digestsOf(f.deployed) == f.want:
		if (f.stalled || f.testFailed) && remediationTarget(f) != nil {
			return stepRemediate
		}
		return stepNone
	case f.failures >= f.remediation.MaxAttempts:
		if remediationTarget(f) != nil {
			return stepRemediate
		}
		return stepHold
	case f.retryIn > 0:
		return stepWait
	case f.latest == nil:
		return stepInstall
	case f.deployed == nil && !f.everDeployed:
		return stepReinstall
	case f.deployed == nil && !upgradable(f.latest.Status):
		return stepHold // Helm cannot upgrade from it: see stuckRelease
	default:
		return stepUpgrade
	}
}

// upgradable reports whether Helm upgrades a release whose newest revision
// has status, when none is deployed.
func upgradable(status string) bool {
	return status == "failed" || status == "superseded"
}

// stuckRelease reports whether f's release is in a state no step of rudder's
// leaves: none deployed, and a newest revision Helm cannot upgrade from (a
// status such as "unknown" that only another client can store).
func stuckRelease(f facts) bool {
	return f.deployed == nil && f.latest != nil && f.everDeployed && !upgradable(f.latest.Status) &&
		!isPending(f.latest.Status) && f.latest.Status != "uninstalled"
}

// leftByRudder reports whether rev, pending, is an operation a rudder process
// started and that nobody is finishing, rather than one another writer has
// in flight. helm upgrade and helm rollback copy rudder's labels from an
// older revision, holder included; only the revision mark tells: rudder's
// install or upgrade carries its own number in LabelRevision, rudder's
// rollback in LabelRollbackAs, rudder's uninstall of a release its resource
// still wants in LabelUninstallOf. A deleted resource's uninstall needs no
// mark: its uninstall step runs it again.
//
// Held by this process (self), it is left: the reconciles of one resource
// never overlap and each Helm action ends within its reconcile, so an
// operation of ours still pending is one whose end Helm could not record
// (the API server went away mid-action). Held by another process, it is
// left only when that process is gone too (facts.holderAlive).
func leftByRudder(rev *storage.Revision, self string) bool {
	h := rev.Labels[LabelHolder]
	if h == "" {
		return false
	}
	own := strconv.Itoa(rev.Number)
	switch rev.Status {
	case "pending-install", "pending-upgrade":
		return rev.Labels[LabelRevision] == own
	case "pending-rollback":
		return rev.Labels[LabelRollbackAs] == own
	case "uninstalling":
		return rev.Labels[LabelUninstallOf] == own
	default:
		return false
	}
}

// isPending reports whether a Helm status means an operation is under way
// (pending-install, pending-upgrade, pending-rollback, uninstalling).
func isPending(status string) bool {
	return strings.HasPrefix(status, "pending-") || status == "uninstalling"
}

// keepsUninstall reports whether an uninstall by another Helm client that
// kept the history stays: the kind says outOfBand: keep and the spec and chart
// are those rudder last deployed. A change of either installs again.
func keepsUninstall(f facts) bool {
	return f.outOfBand == watches.OutOfBandKeep && f.ours != nil && digestsOf(f.ours) == f.want
}

// check reports whether facts f hold what step st needs to run: each step
// reads some of the observed revisions, and plan must never choose a step
// whose revisions are missing. Reconcile checks it before it runs a step.
func (st step) check(f facts) error {
	var missing string
	switch st {
	case stepUninstall:
		if !f.deleting {
			missing = "a deletion timestamp"
		}
	case stepBlocked:
		if f.hookErr == nil {
			missing = "a failed hook"
		}
	case stepUnlock:
		if f.latest == nil || !leftByRudder(f.latest, f.self) || f.holderAlive {
			missing = "a newest revision left pending by a rudder process that is gone"
		}
	case stepInstall:
		if f.latest != nil && f.latest.Status != "uninstalled" {
			missing = "an empty history, or one whose newest revision is uninstalled"
		}
	case stepReinstall:
		if f.deployed != nil || f.latest == nil || isPending(f.latest.Status) {
			missing = "a history with no deployed and no pending revision"
		}
	case stepUpgrade:
		// Helm upgrades from the deployed revision, else from a failed or
		// superseded newest one.
		if f.latest == nil || f.deployed == nil && !upgradable(f.latest.Status) {
			missing = "a deployed revision, or a failed or superseded newest one"
		}
	case stepRollbackDone:
		if f.rollbackTo <= 0 {
			missing = "a rollback request"
		}
	case stepNone:
		if f.deployed == nil {
			missing = "a deployed revision"
		}
	case stepRollback:
		if f.rollbackTo <= 0 || f.latest == nil || isPending(f.latest.Status) {
			missing = "a rollback request and a history with no pending revision"
		}
	case stepRemediate:
		if remediationTarget(f) == nil {
			missing = "a revision to roll back to"
		}
	case stepDropInstall:
		if f.latest == nil || f.latest.Status != "failed" {
			missing = "a failed newest revision"
		}
	case stepDepend:
		if _, ok := depends.IsError(f.dependsErr); !ok {
			missing = "dependencies that are not Ready"
		}
	}
	if missing != "" {
		return fmt.Errorf("step %s needs %s (newest revision %s, deployed %s)", st, missing, describe(f.latest), describe(f.deployed))
	}
	return nil
}

func describe(rev *storage.Revision) string {
	if rev == nil {
		return "none"
	}
	return fmt.Sprintf("%d %s", rev.Number, rev.Status)
}
