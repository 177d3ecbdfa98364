package action

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/stored"
)

// Rollback rolls the release back to the revision AnnotationRollbackTo
// names, as `helm rollback` does: a new revision with that revision's values
// and chart. The new revision is labeled with the request, so that the next
// reconciles hold the release there instead of upgrading it back.
//
// Precondition: the annotation names a revision and no stored revision was
// made for it; no operation is pending.
// On success: Released Unknown (RolledBack) until storage shows it; event
// RolledBack. On failure: Released False (RollbackFailed), event
// RollbackFailed; tried again with backoff, at most remediation.maxAttempts
// times.
type Rollback struct {
	Writer
	MaxHistory  int // revisions kept in storage (watches.yaml maxHistory)
	MaxAttempts int // tries of one spec (remediation.maxAttempts)
}

// Run rolls rel back.
func (s Rollback) Run(ctx context.Context, rel *Release) (Result, error) {
	to := rel.Facts.RollbackTo
	written, err := s.rollback(ctx, rel, s.MaxHistory, to, map[string]string{
		stored.LabelRollbackTo:         strconv.Itoa(to),
		stored.LabelRollbackGeneration: strconv.FormatInt(rel.Resource.GetGeneration(), 10),
		stored.LabelFailedValuesDigest: "null",
		stored.LabelFailedChartDigest:  "null",
		stored.LabelReady:              "null",
	}, "")
	now := s.Clock.Now()
	if err != nil {
		reason := FailureReason(err, status.ReasonRollbackFailed)
		fl := s.Memory.RecordFailure(rel.Key, rel.Facts.Want, reason, err.Error(), now)
		ctrl.LoggerFrom(ctx).Error(err, "Helm rollback failed", "to", to, "attempt", fl.Count, "maxAttempts", s.MaxAttempts)
		s.Events.Eventf(rel.Resource, nil, corev1.EventTypeWarning, reason, "Rollback", "%s (attempt %d of %d)",
			err.Error(), fl.Count, s.MaxAttempts)
		rel.Outcome = &status.Outcome{Phase: status.PhaseFailed, Reason: reason, Message: err.Error(), Failed: true}
		return Result{Result: ctrl.Result{RequeueAfter: fl.RetryIn(now)}}, nil
	}
	s.Memory.ForgetFailure(rel.Key)
	ctrl.LoggerFrom(ctx).Info("Helm rollback succeeded", "to", to, "revision", written.Revision)
	s.Events.Eventf(rel.Resource, nil, corev1.EventTypeNormal, status.ReasonRolledBack, "Rollback",
		"Rolled back release %s to revision %d as revision %d", written.Name, to, written.Revision)
	rel.Outcome = &status.Outcome{Phase: status.PhaseUpdating, Reason: status.ReasonRolledBack,
		Message: fmt.Sprintf("Rolled back to revision %d as revision %d; checking its objects", to, written.Revision)}
	return Result{Result: ctrl.Result{RequeueAfter: 250 * time.Millisecond}}, nil
}

// rollback rolls rel back to revision `to` with labels (besides the holder
// and the revision mark) and description, keeping maxHistory revisions, and
// records what storage must show next.
func (w Writer) rollback(ctx context.Context, rel *Release, maxHistory, to int, labels map[string]string, desc string) (*helm.Release, error) {
	next := strconv.Itoa(nextRevision(rel))
	labels[stored.LabelHolder] = w.Holder
	labels[stored.LabelRevision] = next
	labels[stored.LabelRollbackAs] = "null"
	// A new revision is not tested yet, whatever revision `to` was.
	labels[stored.LabelTest], labels[stored.LabelTestedAt] = "null", "null"
	started := time.Now()
	written, err := rel.Helm.Rollback(ctx, rel.Release.Name, helm.RollbackOptions{
		To: to, MaxHistory: maxHistory, Labels: labels, Description: desc,
		Pending: map[string]string{stored.LabelHolder: w.Holder, stored.LabelRollbackAs: next},
	})
	w.ObserveHelm("rollback", started, err)
	if err != nil {
		return nil, err
	}
	w.expect(rel, written)
	return mark(ctx, rel.Helm, written), nil
}

// RollbackDone ends a rollback once the spec changed after it: it removes
// AnnotationRollbackTo, and the next reconcile upgrades to the new spec.
//
// Precondition: a revision was rolled back to at the annotation's request,
// at an older generation than the resource's.
// Sets nothing; event RollbackEnded.
type RollbackDone struct {
	Client client.Client // writes the custom resource
	Events events.EventRecorder
}

// Run removes rel's resource's AnnotationRollbackTo.
func (s RollbackDone) Run(ctx context.Context, rel *Release) (Result, error) {
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:null}}}`, status.AnnotationRollbackTo)
	if err := s.Client.Patch(ctx, rel.Resource, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return Result{}, fmt.Errorf("removing annotation %s: %w", status.AnnotationRollbackTo, err)
	}
	s.Events.Eventf(rel.Resource, nil, corev1.EventTypeNormal, "RollbackEnded", "Rollback",
		"The spec changed after the rollback to revision %d: removed %s, upgrading to the spec", rel.Facts.RollbackTo, status.AnnotationRollbackTo)
	return Result{Result: ctrl.Result{RequeueAfter: 250 * time.Millisecond}, Done: true}, nil
}
