package reconcile

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/storage"
)

// rollback rolls the release back to the revision AnnotationRollbackTo names,
// as `helm rollback` does: a new revision with that revision's values and
// chart. The new revision is labeled with the request, so that the next
// reconciles hold the release there instead of upgrading it back.
//
// Precondition: the annotation names a revision and no stored revision was
// made for it; no operation is pending.
// On success: Released Unknown (RolledBack) until storage shows it; event
// RolledBack. On failure: Released False (RollbackFailed), event
// RollbackFailed; tried again with backoff, at most remediation.maxAttempts
// times.
func (r *Reconciler) rollback(ctx context.Context, o *observation) (ctrl.Result, error) {
	to := o.Facts.RollbackTo
	hc, err := r.helmFor(o)
	if err != nil {
		return ctrl.Result{}, err
	}
	rel, err := r.helmRollback(ctx, o, hc, to, map[string]string{
		storage.LabelRollbackTo:         strconv.Itoa(to),
		storage.LabelRollbackGeneration: strconv.FormatInt(o.Resource.GetGeneration(), 10),
		storage.LabelFailedValuesDigest: "null",
		storage.LabelFailedChartDigest:  "null",
		storage.LabelReady:              "null",
	}, "")
	if err != nil {
		reason := failureReason(err, status.ReasonRollbackFailed)
		fl := r.memory.recordFailure(o.key, o.Facts.Want, reason, err.Error(), r.now())
		ctrl.LoggerFrom(ctx).Error(err, "Helm rollback failed", "to", to, "attempt", fl.Count, "maxAttempts", r.Watch.Remediation.MaxAttempts)
		r.Recorder.Eventf(o.Resource, nil, corev1.EventTypeWarning, reason, "Rollback", "%s (attempt %d of %d)",
			err.Error(), fl.Count, r.Watch.Remediation.MaxAttempts)
		o.Outcome = &status.Outcome{Phase: status.PhaseFailed, Reason: reason, Message: err.Error(), Failed: true}
		return ctrl.Result{RequeueAfter: fl.RetryIn(r.now())}, nil
	}
	r.memory.forgetFailure(o.key)
	ctrl.LoggerFrom(ctx).Info("Helm rollback succeeded", "to", to, "revision", rel.Revision)
	r.Recorder.Eventf(o.Resource, nil, corev1.EventTypeNormal, status.ReasonRolledBack, "Rollback",
		"Rolled back release %s to revision %d as revision %d", rel.Name, to, rel.Revision)
	o.Outcome = &status.Outcome{Phase: status.PhaseUpdating, Reason: status.ReasonRolledBack,
		Message: fmt.Sprintf("Rolled back to revision %d as revision %d; checking its objects", to, rel.Revision)}
	return ctrl.Result{RequeueAfter: 250 * time.Millisecond}, nil
}

// helmRollback rolls o's release back to revision `to` with labels (besides
// the holder and the revision mark) and description, and records what
// storage must show next.
func (r *Reconciler) helmRollback(ctx context.Context, o *observation, hc *helm.Client, to int, labels map[string]string, desc string) (*helm.Release, error) {
	next := strconv.Itoa(nextRevision(o))
	labels[storage.LabelHolder] = r.Holder
	labels[storage.LabelRevision] = next
	labels[storage.LabelRollbackAs] = "null"
	// A new revision is not tested yet, whatever revision `to` was.
	labels[storage.LabelTest], labels[storage.LabelTestedAt] = "null", "null"
	started := time.Now()
	rel, err := hc.Rollback(ctx, o.Release.Name, helm.RollbackOptions{
		To: to, MaxHistory: r.Watch.MaxHistory, Labels: labels, Description: desc,
		Pending: map[string]string{storage.LabelHolder: r.Holder, storage.LabelRollbackAs: next},
	})
	r.observeHelm("rollback", started, err)
	if err != nil {
		return nil, err
	}
	exp := expectation{revision: rel.Revision, status: rel.Status, at: r.now()}
	if o.Facts.Latest != nil {
		exp.before = o.Facts.Latest.UID
	}
	r.memory.expect(o.key, exp)
	return r.mark(ctx, hc, rel), nil
}

// rollbackDone ends a rollback once the spec changed after it: it removes
// AnnotationRollbackTo, and the next reconcile upgrades to the new spec.
//
// Precondition: a revision was rolled back to at the annotation's request,
// at an older generation than the resource's.
// Sets nothing; event RollbackEnded.
func (r *Reconciler) rollbackDone(ctx context.Context, o *observation) (ctrl.Result, error) {
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:null}}}`, status.AnnotationRollbackTo)
	if err := r.Client.Patch(ctx, o.Resource, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return ctrl.Result{}, fmt.Errorf("removing annotation %s: %w", status.AnnotationRollbackTo, err)
	}
	r.Recorder.Eventf(o.Resource, nil, corev1.EventTypeNormal, "RollbackEnded", "Rollback",
		"The spec changed after the rollback to revision %d: removed %s, upgrading to the spec", o.Facts.RollbackTo, status.AnnotationRollbackTo)
	o.done = true
	return ctrl.Result{RequeueAfter: 250 * time.Millisecond}, nil
}

// rollbackRequest reads AnnotationRollbackTo: 0 when absent.
func rollbackRequest(obj *unstructured.Unstructured) (int, error) {
	v, ok := obj.GetAnnotations()[status.AnnotationRollbackTo]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("annotation %s: %q is not a revision number; set it to one of the revisions in status.history, or remove it", status.AnnotationRollbackTo, v)
	}
	return n, nil
}

// rolledBackAt returns the generation at which the newest stored revision
// made for a rollback to `to` was asked for; -1 when there is none.
func rolledBackAt(history []storage.Revision, to int) int64 {
	if to == 0 {
		return -1
	}
	for _, rev := range history {
		if rev.Labels[storage.LabelRollbackTo] != strconv.Itoa(to) {
			continue
		}
		if g, err := strconv.ParseInt(rev.Labels[storage.LabelRollbackGeneration], 10, 64); err == nil {
			return g
		}
	}
	return -1
}
