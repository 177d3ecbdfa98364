package reconcile

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
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
	r.Recorder.Eventf(o.obj, nil, corev1.EventTypeNormal, ReasonUninstalled, "Uninstall",
		"Uninstalled release %s, which was never deployed, to install it again", o.release.Name)
	return r.install(ctx, o)
}
