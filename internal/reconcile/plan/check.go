package plan

import (
	"fmt"

	"github.com/rudder-operator/rudder/internal/depends"
	"github.com/rudder-operator/rudder/internal/stored"
)

// Check reports whether facts f hold what step st needs to run: each step
// reads some of the observed revisions, and plan must never choose a step
// whose revisions are missing. The reconciler checks it before it runs a step.
func (st Step) Check(f Facts) error {
	var missing string
	switch st {
	case StepUninstall:
		if !f.Deleting {
			missing = "a deletion timestamp"
		}
	case StepBlocked:
		if f.HookErr == nil {
			missing = "a failed hook"
		}
	case StepUnlock:
		if f.Latest == nil || !LeftByRudder(f.Latest, f.Self) || f.HolderAlive {
			missing = "a newest revision left pending by a rudder process that is gone"
		}
	case StepInstall:
		if f.Latest != nil && f.Latest.Status != "uninstalled" {
			missing = "an empty history, or one whose newest revision is uninstalled"
		}
	case StepReinstall:
		if f.Deployed != nil || f.Latest == nil || IsPending(f.Latest.Status) {
			missing = "a history with no deployed and no pending revision"
		}
	case StepUpgrade:
		// Helm upgrades from the deployed revision, else from a failed or
		// superseded newest one.
		if f.Latest == nil || f.Deployed == nil && !Upgradable(f.Latest.Status) {
			missing = "a deployed revision, or a failed or superseded newest one"
		}
	case StepRollbackDone:
		if f.RollbackTo <= 0 {
			missing = "a rollback request"
		}
	case StepNone:
		if f.Deployed == nil && !KeepsOutOfBand(f) {
			missing = "a deployed revision"
		}
	case StepRollback:
		if f.RollbackTo <= 0 || f.Latest == nil || IsPending(f.Latest.Status) {
			missing = "a rollback request and a history with no pending revision"
		}
	case StepRemediate:
		if RemediationTarget(f) == nil {
			missing = "a revision to roll back to"
		}
	case StepDropInstall:
		if f.Latest == nil || f.Latest.Status != "failed" {
			missing = "a failed newest revision"
		}
	case StepDepend:
		if _, ok := depends.IsError(f.DependsErr); !ok {
			missing = "dependencies that are not Ready"
		}
	}
	if missing != "" {
		return fmt.Errorf("step %s needs %s (newest revision %s, deployed %s)", st, missing, describe(f.Latest), describe(f.Deployed))
	}
	return nil
}

func describe(rev *stored.Revision) string {
	if rev == nil {
		return "none"
	}
	return fmt.Sprintf("%d %s", rev.Number, rev.Status)
}
