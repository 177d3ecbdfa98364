package plan

import (
	"github.com/rudder-operator/rudder/internal/watches"
)

// Step is the one thing a reconcile does to a release.
type Step string

// The steps, each with what it is chosen for.
const (
	StepUninstall    Step = "uninstall"     // the custom resource is being deleted
	StepInvalid      Step = "invalid"       // its values cannot be computed: wait for a spec change
	StepBlocked      Step = "blocked"       // a hook failed: retry it with backoff, touch no release
	StepWait         Step = "wait"          // another writer's operation is pending, or storage has not caught up with ours
	StepUnlock       Step = "unlock"        // a rudder process that is gone left the newest revision pending
	StepInstall      Step = "install"       // nothing is stored yet
	StepReinstall    Step = "reinstall"     // no revision was ever deployed (none is superseded) and the last try failed
	StepUpgrade      Step = "upgrade"       // the deployed revision's values or chart are not the wanted ones
	StepHold         Step = "hold"          // these values and this chart failed too often: wait for a change
	StepNone         Step = "none"          // the release is up to date: repair drift, assess readiness
	StepPaused       Step = "paused"        // the user paused the resource: assess, touch nothing
	StepRollback     Step = "rollback"      // the annotation asks for a revision not rolled back to yet
	StepRollbackDone Step = "rollback-done" // the spec changed after a rollback: clear its annotation
	StepRemediate    Step = "remediate"     // the spec failed: roll back to the last deployed revision, then hold
	StepDropInstall  Step = "drop-install"  // an install failed and the kind's installFailure says uninstall it
	StepDepend       Step = "depend"        // an install or upgrade waits for the resources it depends on
	StepGated        Step = "gated"         // a hook holds the upgrade until it has done something first (a backup)
)

// WritesRevision reports whether step st runs a Helm action that stores a
// revision, pending until the action ends: the process's Lease is held
// while it runs (the reconciler's Lease), so that no other process unlocks it.
func (st Step) WritesRevision() bool {
	switch st {
	case StepInstall, StepReinstall, StepUpgrade, StepUninstall, StepRollback, StepRemediate, StepDropInstall:
		return true
	}
	return false
}

// Plan picks the step for the observed facts.
func Plan(f Facts) Step {
	st := planRelease(f)
	if f.DependsErr != nil && (st == StepInstall || st == StepReinstall || st == StepUpgrade) {
		return StepDepend
	}
	return st
}

// planRelease picks the step for the observed facts, dependencies aside.
func planRelease(f Facts) Step {
	switch {
	case f.ActorErr != nil:
		return StepInvalid
	case f.Deleting:
		return StepUninstall
	case f.Paused:
		return StepPaused
	case !f.CaughtUp:
		return StepWait
	case f.ValuesErr != nil:
		return StepInvalid
	case f.HookErr != nil:
		return StepBlocked
	case f.Latest != nil && IsPending(f.Latest.Status):
		if LeftByRudder(f.Latest, f.Self) && !f.HolderAlive {
			return StepUnlock
		}
		return StepWait // another writer's, or a live rudder's: theirs to finish
	case AwaitsOutOfBand(f):
		return StepWait // another Helm client's operation over rudder's revision: nothing asks rudder to act
	case f.Latest != nil && f.Latest.Status == "uninstalled":
		// Another Helm client ran `helm uninstall --keep-history`.
		if KeepsUninstall(f) {
			return StepHold
		}
		return StepInstall // Helm's install --replace, numbering on from the history
	case f.RollbackErr != nil:
		return StepInvalid
	case f.RollbackTo > 0 && f.RolledBackAt < 0 && f.Latest != nil: // with nothing stored, install first
		if f.Failures >= f.Remediation.MaxAttempts {
			return StepHold
		}
		if f.RetryIn > 0 {
			return StepWait
		}
		return StepRollback
	case f.RollbackTo > 0 && f.Generation > f.RolledBackAt:
		return StepRollbackDone
	case f.RollbackTo > 0 && f.Deployed != nil:
		return StepNone // held on the rolled-back revision
	case f.Deployed == nil && f.Latest != nil && f.Latest.Status == "failed" &&
		f.Remediation.InstallFailure == watches.InstallFailureUninstall:
		return StepDropInstall
	case KeepsOutOfBand(f):
		return StepNone // held on another Helm client's revision
	// While another Helm client's revision serves (ServedOutOfBand), the
	// release is upgraded back to the spec from the newest signed revision.
	case f.Deployed != nil && HeldAfterRemediation(f) && !ServedOutOfBand(f):
		return StepNone // held on the rollback made after `want` failed
	case f.Deployed != nil && DigestsOf(f.Deployed) == f.Want && !ServedOutOfBand(f):
		if (f.Stalled || f.TestFailed) && RemediationTarget(f) != nil {
			return StepRemediate
		}
		return StepNone
	case f.Failures >= f.Remediation.MaxAttempts:
		if RemediationTarget(f) != nil {
			return StepRemediate
		}
		return StepHold
	case f.RetryIn > 0:
		return StepWait
	case f.Latest == nil:
		return StepInstall
	case f.Deployed == nil && !f.EverDeployed:
		return StepReinstall
	case f.Deployed == nil && !Upgradable(f.Latest.Status):
		return StepHold // Helm cannot upgrade from it: see Stuck
	default:
		return StepUpgrade
	}
}
