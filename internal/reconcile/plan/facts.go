package plan

import (
	"time"

	"github.com/rudder-operator/rudder/internal/stored"
	"github.com/rudder-operator/rudder/internal/watches"
)

// Digests identify what a revision was made from.
type Digests struct{ Values, Chart string }

// DigestsOf returns the digests rev carries in its labels.
func DigestsOf(rev *stored.Revision) Digests {
	return Digests{Values: rev.Labels[stored.LabelValuesDigest], Chart: rev.Labels[stored.LabelChartDigest]}
}

// Facts are what plan decides from, all observed before any action.
type Facts struct {
	Deleting bool
	Paused   bool
	// ActorErr says rudder may act as no one for the resource: its
	// rudder.dev/service-account names no account, or one its namespace does
	// not allow. Nothing is done for it, not even its uninstall, until that
	// changes: rudder never falls back to its own rights.
	ActorErr  error
	ValuesErr error
	HookErr   error // the first hook that failed, which blocks any Helm step
	Want      Digests
	// Only the revisions rudder signed for the resource are evidence: the
	// facts below are read from them alone, as if no other were stored,
	// but for Serving and Stored.
	Latest   *stored.Revision // newest signed revision, nil when none
	Deployed *stored.Revision // newest signed deployed revision, nil when none
	// Serving is the newest deployed revision, whoever wrote it: another
	// Helm client's (ServedOutOfBand) or rudder's. Status reports it; no step
	// rests on it unless signed.
	Serving *stored.Revision
	// Foreign is the newest revision not signed, when it is newer than
	// every signed one: another Helm client's operation, or a forgery.
	Foreign *stored.Revision
	// ForeignUnderWay says Foreign is pending and younger than
	// ForeignOperationTimeout: another Helm client's operation may be under
	// way, which rudder, while the spec asks nothing of it, does not
	// overtake (AwaitsOutOfBand), and under outOfBand: keep does not fight
	// with drift repair (HoldsRepair). Older, it is taken for abandoned or
	// forged, and ignored.
	ForeignUnderWay bool
	// Stored is the highest revision number stored, signed or not: the next
	// revision is numbered past it.
	Stored int
	// EverDeployed is set when a stored revision is or was deployed: an
	// upgrade canceled half-way (SIGTERM) can leave none deployed, and such
	// a release is upgraded (Helm upgrades from the last failed revision),
	// never uninstalled and installed again.
	EverDeployed bool
	CaughtUp     bool          // storage shows the result of our last action
	Failures     int           // failed tries for `want` in a row
	RetryIn      time.Duration // time left before the next try is allowed
	Self         string        // this process's stored.LabelHolder value
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

	Ours              *stored.Revision // newest revision rudder wrote (Latest), nil when none
	Previous          *stored.Revision // newest signed revision deployed before `deployed`, nil when none
	Stalled           bool             // `deployed` did not become Ready within remediation.readinessTimeout
	TestFailed        bool             // `deployed` failed its chart tests, which the kind counts (test.enable)
	RemediationFailed bool             // a rollback remediating `want` failed: try no other

	// DependsErr holds back an install or upgrade: a resource named by the
	// depends-on annotation is not Ready, they form a cycle, or the
	// annotation is malformed (a *depends.Error).
	DependsErr error
}
