package reconcile

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/storage"
)

// uninstall removes the release of a custom resource being deleted, with its
// objects and its whole history, then lets the resource go by removing the
// finalizer.
//
// Precondition: the custom resource has a deletion timestamp.
// On success: event Uninstalled; the resource disappears, so no status. When
// only the finalizer's removal fails, no status either: the retry removes it.
// On failure: Released False (UninstallFailed), phase Failed, event
// UninstallFailed; retried with the controller's backoff.
func (r *Reconciler) uninstall(ctx context.Context, o *observation) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(o.Resource, Finalizer) {
		o.done = true
		return ctrl.Result{}, nil
	}
	if err := r.uninstallRelease(o); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.finalizeHooks(ctx, o); err != nil {
		r.Recorder.Eventf(o.Resource, nil, corev1.EventTypeWarning, status.ReasonHookFailed, "Finalize", "%s", err.Error())
		o.Outcome = &status.Outcome{Phase: status.PhaseFailed, Reason: status.ReasonHookFailed, Message: err.Error(), Failed: true}
		return ctrl.Result{}, err
	}
	if len(o.History) > 0 {
		ctrl.LoggerFrom(ctx).Info("Helm uninstall succeeded")
		r.Recorder.Eventf(o.Resource, nil, corev1.EventTypeNormal, status.ReasonUninstalled, "Uninstall", "Uninstalled release %s", o.Release.Name)
	}
	// The release is gone: what this reconcile observed of it is no longer
	// true, so no status is written, even when the finalizer stays for the
	// retry to remove.
	o.done = true
	orig := o.Resource.DeepCopy()
	controllerutil.RemoveFinalizer(o.Resource, Finalizer)
	err := r.Client.Patch(ctx, o.Resource, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	if client.IgnoreNotFound(err) != nil { // gone already: a reconcile from a stale cache got here first
		return ctrl.Result{}, fmt.Errorf("removing finalizer %s: %w", Finalizer, err)
	}
	r.memory.Forget(o.key)
	return ctrl.Result{}, nil
}

// uninstallRelease runs Helm's uninstall of o's release; a failure is recorded
// as a Warning event and the outcome Released False (UninstallFailed). When
// the resource is not being deleted, the newest revision is marked as Helm
// marks it uninstalling (LabelUninstallOf), so that an uninstall cut short is
// unlocked, not waited for as another writer's. A newest revision rudder did
// not write is uninstalled without re-applying trust to its manifest: only
// the objects the resource owns are deleted, and its hooks do not run.
func (r *Reconciler) uninstallRelease(o *observation) error {
	hc, err := r.helmFor(o)
	if err != nil {
		return err
	}
	var mark map[string]string
	if l := o.Facts.Latest; l != nil && !o.Facts.Deleting {
		mark = map[string]string{storage.LabelHolder: r.Holder, storage.LabelUninstallOf: strconv.Itoa(l.Number)}
	}
	started := time.Now()
	var left []string
	err = hc.Uninstall(o.Release.Name, mark, func(ref string) { left = append(left, ref) })
	r.observeHelm("uninstall", started, err)
	if len(left) > 0 {
		r.Recorder.Eventf(o.Resource, nil, corev1.EventTypeWarning, status.ReasonUninstallLeft, "Uninstall",
			"Release %s: left %s; rudder removes only what it made, and applies no manifest it did not write (its hooks did not run); delete what is left by hand if it is not wanted",
			o.Release.Name, strings.Join(left, ", "))
	}
	if err != nil {
		r.Recorder.Eventf(o.Resource, nil, corev1.EventTypeWarning, status.ReasonUninstallFailed, "Uninstall", "%s", err.Error())
		o.Outcome = &status.Outcome{Phase: status.PhaseFailed, Reason: status.ReasonUninstallFailed, Message: err.Error(), Failed: true}
		return err
	}
	return nil
}
