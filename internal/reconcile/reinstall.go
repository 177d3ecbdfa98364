package reconcile

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/reconcile/status"
)

// reinstall uninstalls a release that was never deployed (its install failed)
// and installs it again: Helm cannot upgrade a release with no deployed
// revision.
//
// Precondition: storage holds revisions of the release, none deployed, none
// pending.
// Sets what install sets; on a failed uninstall, Released False
// (UninstallFailed).
func (r *Reconciler) reinstall(ctx context.Context, o *observation) (ctrl.Result, error) {
	if err := r.uninstallRelease(o); err != nil {
		return ctrl.Result{}, err
	}
	r.Recorder.Eventf(o.Resource, nil, corev1.EventTypeNormal, status.ReasonUninstalled, "Uninstall",
		"Uninstalled release %s, which was never deployed, to install it again", o.Release.Name)
	// Storage holds no revision now: the install's revision is 1 again, as
	// its labels must say, and Helm need not list the history. A cache that
	// still shows the old revisions cannot meet the install's expectation:
	// they were never deployed.
	o.Facts.Latest, o.History, o.Latest = nil, nil, nil
	return r.install(ctx, o)
}
