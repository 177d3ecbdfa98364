package action

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/stored"
)

// Unlock marks failed the newest revision, left pending by a rudder process
// that is gone (it died mid-operation), so that the next reconcile can
// upgrade or reinstall. A process is gone when its Lease (package lease)
// expired or was deleted: a live one's operation, such as a peer's when two
// managers run at once, is never broken. A revision pending without a holder
// belongs to another writer, such as a person with the helm CLI, and is
// never unlocked: plan waits for it.
//
// Precondition: the newest revision is pending and its LabelHolder names this
// rudder process, or another whose Lease is not fresh.
// Sets: Released Unknown (Unlocked); event Unlocked.
type Unlock struct {
	Holder string // this process (stored.LabelHolder)
	Events events.EventRecorder
}

// Run unlocks rel's newest revision.
func (s Unlock) Run(ctx context.Context, rel *Release) (Result, error) {
	latest := rel.Facts.Latest
	desc := fmt.Sprintf("%s by rudder %s, which stopped before finishing; unlocked by rudder %s",
		latest.Status, latest.Labels[stored.LabelHolder], s.Holder)
	if latest.Labels[stored.LabelHolder] == s.Holder {
		desc = fmt.Sprintf("%s by this rudder process, whose Helm action ended before it could record the result; unlocked by rudder %s",
			latest.Status, s.Holder)
	}
	unlocked, err := rel.Helm.Unlock(rel.Release.Name, latest.Number, desc, stored.LabelUninstallOf)
	if err != nil {
		return Result{}, err
	}
	if !unlocked { // storage had moved on; the cache will show it
		return Result{Result: ctrl.Result{RequeueAfter: time.Second}, Done: true}, nil
	}
	ctrl.LoggerFrom(ctx).Info("Unlocked a revision left pending", "revision", latest.Number, "holder", latest.Labels[stored.LabelHolder])
	s.Events.Eventf(rel.Resource, nil, corev1.EventTypeNormal, status.ReasonUnlocked, "Unlock",
		"Marked revision %d failed: it was %s", latest.Number, desc)
	rel.Outcome = &status.Outcome{Phase: status.PhaseUpdating, Reason: status.ReasonUnlocked, Message: fmt.Sprintf("Revision %d was %s", latest.Number, desc)}
	return Result{Result: ctrl.Result{RequeueAfter: 250 * time.Millisecond}}, nil
}
