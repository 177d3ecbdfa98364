package reconcile

import (
	"strings"
	"time"

	"github.com/rudder-operator/rudder/internal/storage"
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
	stepReinstall    step = "reinstall"     // no revision was ever deployed and the last try failed
	stepUpgrade      step = "upgrade"       // the deployed revision's values or chart are not the wanted ones
	stepHold         step = "hold"          // these values and this chart failed too often: wait for a change
	stepNone         step = "none"          // the release is up to date: repair drift, assess readiness
	stepPaused       step = "paused"        // the user paused the resource: assess, touch nothing
	stepRollback     step = "rollback"      // the annotation asks for a revision not rolled back to yet
	stepRollbackDone step = "rollback-done" // the spec changed after a rollback: clear its annotation
)

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
	caughtUp  bool              // storage shows the result of our last action
	failures  int               // failed tries for `want` in a row
	retryIn   time.Duration     // time left before the next try is allowed
	self      string            // this process's LabelHolder value

	generation  int64 // the custom resource's metadata.generation
	rollbackTo  int   // the revision AnnotationRollbackTo asks for; 0 when none
	rollbackErr error // the annotation is not a revision number
	// rolledBackAt is the generation at which the newest revision made for
	// rollbackTo was asked for; -1 when no such revision is stored.
	rolledBackAt int64
}

// maxAttempts bounds the tries for one pair of values and chart digests, so a
// release that cannot succeed never piles up failed revisions.
const maxAttempts = 3

// plan picks the step for the observed facts.
func plan(f facts) step {
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
		if h := f.latest.Labels[LabelHolder]; h != "" && h != f.self {
			return stepUnlock
		}
		return stepWait
	case f.rollbackErr != nil:
		return stepInvalid
	case f.rollbackTo > 0 && f.rolledBackAt < 0:
		if f.failures >= maxAttempts {
			return stepHold
		}
		if f.retryIn > 0 {
			return stepWait
		}
		return stepRollback
	case f.rollbackTo > 0 && f.generation > f.rolledBackAt:
		return stepRollbackDone
	case f.rollbackTo > 0:
		return stepNone // held on the rolled-back revision
	case f.deployed != nil && digestsOf(f.deployed) == f.want:
		return stepNone
	case f.failures >= maxAttempts:
		return stepHold
	case f.retryIn > 0:
		return stepWait
	case f.latest == nil:
		return stepInstall
	case f.deployed == nil:
		return stepReinstall
	default:
		return stepUpgrade
	}
}

// isPending reports whether a Helm status means an operation is under way
// (pending-install, pending-upgrade, pending-rollback, uninstalling).
func isPending(status string) bool {
	return strings.HasPrefix(status, "pending-") || status == "uninstalling"
}
