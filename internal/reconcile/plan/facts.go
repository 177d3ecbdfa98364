package plan

import (
	"time"

	"github.com/rudder-operator/rudder/internal/storage"
	"github.com/rudder-operator/rudder/internal/watches"
)

// Digests identify what a revision was made from.
type Digests struct{ Values, Chart string }

// DigestsOf returns the digests rev carries in its labels.
func DigestsOf(rev *storage.Revision) Digests {
	return Digests{Values: rev.Labels[storage.LabelValuesDigest], Chart: rev.Labels[storage.LabelChartDigest]}
}

// Facts are what plan decides from, all observed before any action.
type Facts struct {
	Deleting  bool
	Paused    bool
	ValuesErr error
	HookErr   error // the first hook that failed, which blocks any Helm step
	Want      Digests
	Latest    *storage.Revision // newest stored revision, nil when none
	Deployed  *storage.Revision // newest deployed revision, nil when none
	// EverDeployed is set when a stored revision is or was deployed: an
	// upgrade canceled half-way (SIGTERM) can leave none deployed, and such
	// a release is upgraded (Helm upgrades from the last failed revision),
	// never uninstalled and installed again.
	EverDeployed bool
	CaughtUp     bool          // storage shows the result of our last action
	Failures     int           // failed tries for `want` in a row
	RetryIn      time.Duration // time left before the next try is allowed
	Self         string        // this process's storage.LabelHolder value
	// HolderAlive is set when the newest revision is pending, left by
	// another rudder process, and that process still holds its Lease.
	HolderAlive bool

	Generation  int64 // the custom resource's metadata.generation
	RollbackTo  int   // the revision AnnotationRollbackTo asks for; 0 when none
	RollbackErr error // the annotation is not a revision number
	// RolledBackAt is the generation at which the newest revision made for
	// rollbackTo was asked for; -1 when no such revision is stored.
	RolledBackAt int64

	// The kind's policies (watches.yaml). remediation.MaxAttempts bounds the
	// tries for one pair of digests, so that a release that cannot succeed
	// never piles up failed revisions.
	Remediation watches.Remediation
	OutOfBand   watches.OutOfBand

	Ours              *storage.Revision // newest revision rudder wrote, nil when none
	Previous          *storage.Revision // newest revision deployed before `deployed`, nil when none
	Stalled           bool              // `deployed` did not become Ready within remediation.readinessTimeout
	TestFailed        bool              // `deployed` failed its chart tests, which the kind counts (test.enable)
	RemediationFailed bool              // a rollback remediating `want` failed: try no other

	// DependsErr holds back an install or upgrade: a resource named by the
	// depends-on annotation is not Ready, they form a cycle, or the
	// annotation is malformed (a *depends.Error).
	DependsErr error
}
