package action

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/identity"
	"github.com/rudder-operator/rudder/internal/reconcile/assess"
	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/stored"
)

// Release is the release one step acts on: what the reconcile observed of it
// and of its custom resource, and a Helm client acting within the resource's
// scope as the account rudder acts as for it. The step sets the
// observation's Outcome.
type Release struct {
	*status.Observation
	Key    types.NamespacedName // the custom resource's key
	Helm   *helm.Client
	Values map[string]any // the release values (install, upgrade)
	// Chart loads a fresh copy of the chart Facts.Want.Chart names: the
	// kind's, or the one a revision stored while a rollout has not promoted
	// the resource to the kind's (install, upgrade). Nil: the kind's.
	Chart func() (*helm.Chart, error)
	Scope helm.Scope     // where the chart's objects may go (install, upgrade, maintain)
	Actor identity.Actor // whom rudder acts as for the resource (maintain's repairs)
	Seen  []assess.Seen  // what earlier assessments found of each object of Deployed (maintain)
}

// Result is what a step asks of the controller once it ran.
type Result struct {
	ctrl.Result
	// Done: the step leaves no status to write. The next reconcile, which
	// the event of the release's storage Secret brings, writes it, or the
	// resource is gone.
	Done bool
}

// Memory is what steps record in the controller's memory of each resource,
// for the reconciles after them.
type Memory interface {
	// Expect records that storage must show written, in a Secret other
	// than before, before a plan may trust the cache again.
	Expect(key types.NamespacedName, written *helm.Release, before types.UID, now time.Time)
	// Unexpect drops what Expect recorded.
	Unexpect(key types.NamespacedName)
	// RememberWritten keeps written to answer the first read of its revision.
	RememberWritten(key types.NamespacedName, written *helm.Release)
	// RecordFailure counts one more failed try for want.
	RecordFailure(key types.NamespacedName, want plan.Digests, reason, message string, now time.Time) status.Failure
	// ForgetFailure ends the failures: the wanted digests succeeded.
	ForgetFailure(key types.NamespacedName)
	// Forget drops all that is remembered of the resource.
	Forget(key types.NamespacedName)
}

// Writer is what every step that writes a revision uses: who writes, and
// where what it did is recorded.
type Writer struct {
	Holder string // this process, on the revisions it writes (stored.LabelHolder)
	Events events.EventRecorder
	Memory Memory
	Clock  clock.PassiveClock
	// ObserveHelm records how long a Helm action took (the metrics).
	ObserveHelm func(action string, started time.Time, err error)
}

// expect records what storage must show after rel's action wrote written.
func (w Writer) expect(rel *Release, written *helm.Release) {
	var before types.UID
	if l := rel.Facts.Latest; l != nil {
		before = l.UID
	}
	w.Memory.Expect(rel.Key, written, before, w.Clock.Now())
}

// nextRevision is the number the next revision of rel gets: past every
// stored one, signed or not.
func nextRevision(rel *Release) int {
	return rel.Facts.Stored + 1
}

// mark makes sure written, just written by rudder, carries its own number
// as LabelRevision: nextRevision guessed it, and another writer may have
// stored a revision in between.
func mark(ctx context.Context, hc *helm.Client, written *helm.Release) *helm.Release {
	n := strconv.Itoa(written.Revision)
	if written.Labels[stored.LabelRevision] == n {
		return written
	}
	marked, err := hc.Label(written.Name, written.Revision, map[string]string{stored.LabelRevision: n})
	if err != nil {
		// The revision then reads as another client's: at worst one more upgrade.
		ctrl.LoggerFrom(ctx).Error(err, "Cannot mark a revision as rudder's", "revision", written.Revision)
		return written
	}
	marked.Applied = written.Applied
	return marked
}

// FailureReason returns the condition reason of a failed Helm action: what
// stopped it when that is the release's scope or the account's rights, else
// fallback.
func FailureReason(err error, fallback string) string {
	switch {
	case errors.Is(err, helm.ErrNotSigned):
		return status.ReasonRevisionNotSigned
	case errors.Is(err, helm.ErrOutsideNamespace):
		return status.ReasonOutsideNamespace
	case errors.Is(err, helm.ErrClusterScopedNotAllowed):
		return status.ReasonClusterScopedNotAllowed
	case errors.Is(err, helm.ErrNotOwned):
		return status.ReasonObjectNotOwned
	case apierrors.IsForbidden(err) || strings.Contains(err.Error(), " is forbidden: User "):
		// Helm joins some API errors into strings: the message counts too.
		return status.ReasonForbidden
	}
	return fallback
}
