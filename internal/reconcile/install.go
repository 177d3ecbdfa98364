package reconcile

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
)

// install installs the first revision of a release.
//
// Precondition: storage holds no revision of the release, or its newest is
// uninstalled (helm uninstall --keep-history), which this install replaces.
// On success: event InstallSucceeded, and no status until the next reconcile,
// which the revision's storage Secret brings, assesses the new revision.
// On failure: Released False (InstallFailed), phase Failed, event
// InstallFailed; tried again with backoff, at most remediation.maxAttempts times for the
// same values and chart.
func (r *Reconciler) install(ctx context.Context, o *observation) (ctrl.Result, error) {
	return r.act(ctx, o, helmAction{
		verb:      "Install",
		succeeded: status.ReasonInstallSucceeded,
		failed:    status.ReasonInstallFailed,
		do: func(ctx context.Context, c *helm.Client, s helm.Spec) (*helm.Release, error) {
			s.Replace = o.Facts.Latest != nil && o.Facts.Latest.Status == "uninstalled"
			s.Unstored = len(o.History) == 0
			return c.Install(ctx, s)
		},
	})
}
