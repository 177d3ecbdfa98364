package action

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/stored"
)

// Uninstall removes the release of a custom resource being deleted, with its
// objects and its whole history, runs the kind's hooks' Finalize, then lets
// the resource go by removing Finalizer.
//
// Precondition: the custom resource has a deletion timestamp and Finalizer.
// The context carries the client hooks write with (hook.WithActing).
// On success: event Uninstalled; the resource disappears, so no status. When
// only the finalizer's removal fails, no status either: the retry removes it.
// On failure: Released False (UninstallFailed), phase Failed, event
// UninstallFailed; retried with the controller's backoff.
type Uninstall struct {
	Writer
	Hooks     []hook.Hook   // the kind's hooks, finalized after the release is gone
	Client    client.Client // writes the custom resource
	Finalizer string        // the finalizer that keeps the resource until its release is gone
}

// Run uninstalls rel and removes its resource's finalizer.
func (s Uninstall) Run(ctx context.Context, rel *Release) (Result, error) {
	if err := s.uninstall(rel); err != nil {
		return Result{}, err
	}
	for _, h := range s.Hooks {
		if err := h.Finalize(ctx, rel.Resource); err != nil {
			err = fmt.Errorf("hook %s: %w", h.Name(), err)
			s.Events.Eventf(rel.Resource, nil, corev1.EventTypeWarning, status.ReasonHookFailed, "Finalize", "%s", err.Error())
			rel.Outcome = &status.Outcome{Phase: status.PhaseFailed, Reason: status.ReasonHookFailed, Message: err.Error(), Failed: true}
			return Result{}, err
		}
	}
	if len(rel.History) > 0 {
		ctrl.LoggerFrom(ctx).Info("Helm uninstall succeeded")
		s.Events.Eventf(rel.Resource, nil, corev1.EventTypeNormal, status.ReasonUninstalled, "Uninstall", "Uninstalled release %s", rel.Release.Name)
	}
	// The release is gone: what this reconcile observed of it is no longer
	// true, so no status is written, even when the finalizer stays for the
	// retry to remove.
	orig := rel.Resource.DeepCopy()
	controllerutil.RemoveFinalizer(rel.Resource, s.Finalizer)
	err := s.Client.Patch(ctx, rel.Resource, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	if apierrors.IsConflict(err) {
		// Read from a stale cache (a status write may bring no event that
		// passes the predicates): the retry, from a fresher one, removes it.
		ctrl.LoggerFrom(ctx).V(1).Info("The resource changed since it was read; removing the finalizer again", "error", err.Error())
		return Result{Done: true, Result: ctrl.Result{RequeueAfter: time.Second}}, nil
	}
	if client.IgnoreNotFound(err) != nil { // gone already: a reconcile from a stale cache got here first
		return Result{Done: true}, fmt.Errorf("removing finalizer %s: %w", s.Finalizer, err)
	}
	s.Memory.Forget(rel.Key)
	return Result{Done: true}, nil
}

// Reinstall uninstalls a release that was never deployed (its install
// failed) and installs it again: Helm cannot upgrade a release with no
// deployed revision.
//
// Precondition: storage holds revisions of the release, none deployed, none
// pending.
// Sets what Install sets; on a failed uninstall, Released False
// (UninstallFailed).
type Reinstall struct {
	Install Install
}

// Run uninstalls rel and installs it again.
func (s Reinstall) Run(ctx context.Context, rel *Release) (Result, error) {
	if err := s.Install.uninstall(rel); err != nil {
		return Result{}, err
	}
	s.Install.Events.Eventf(rel.Resource, nil, corev1.EventTypeNormal, status.ReasonUninstalled, "Uninstall",
		"Uninstalled release %s, which was never deployed, to install it again", rel.Release.Name)
	// Storage holds no revision now: the install's revision is 1 again, as
	// its labels must say, and Helm need not list the history. A cache that
	// still shows the old revisions cannot meet the install's expectation:
	// they were never deployed.
	rel.Facts.Latest, rel.Facts.Stored, rel.History, rel.Latest = nil, 0, nil, nil
	return s.Install.Run(ctx, rel)
}

// uninstall runs Helm's uninstall of rel; a failure is recorded as a Warning
// event and the outcome Released False (UninstallFailed). When the resource
// is not being deleted, the newest revision is marked as Helm marks it
// uninstalling (LabelUninstallOf), so that an uninstall cut short is
// unlocked, not waited for as another writer's. A newest revision rudder did
// not write is uninstalled without re-applying trust to its manifest: only
// the objects the resource owns are deleted, and its hooks do not run.
func (w Writer) uninstall(rel *Release) error {
	var mark map[string]string
	if l := rel.Facts.Latest; l != nil && !rel.Facts.Deleting {
		mark = map[string]string{stored.LabelHolder: w.Holder, stored.LabelUninstallOf: strconv.Itoa(l.Number)}
	}
	started := time.Now()
	var left []string
	err := rel.Helm.Uninstall(rel.Release.Name, mark, func(ref string) { left = append(left, ref) })
	w.ObserveHelm("uninstall", started, err)
	if len(left) > 0 {
		w.Events.Eventf(rel.Resource, nil, corev1.EventTypeWarning, status.ReasonUninstallLeft, "Uninstall",
			"Release %s: left %s; rudder removes only what it made, and applies no manifest it did not write (its hooks did not run); delete what is left by hand if it is not wanted",
			rel.Release.Name, strings.Join(left, ", "))
	}
	if err != nil {
		w.Events.Eventf(rel.Resource, nil, corev1.EventTypeWarning, status.ReasonUninstallFailed, "Uninstall", "%s", err.Error())
		rel.Outcome = &status.Outcome{Phase: status.PhaseFailed, Reason: status.ReasonUninstallFailed, Message: err.Error(), Failed: true}
		return err
	}
	return nil
}
