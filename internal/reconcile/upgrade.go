package reconcile

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/storage"
)

// upgrade makes a new revision with the custom resource's current values and
// the kind's current chart, pruning storage to the kind's maxHistory.
//
// Precondition: a revision is deployed and its values or chart digest differ
// from the wanted ones, or none is deployed any more but one was (an upgrade
// canceled half-way left it superseded); no operation is pending.
// On success: event UpgradeSucceeded, and no status until the next reconcile,
// which the revision's storage Secret brings, assesses the new revision.
// On failure: Released False (UpgradeFailed), phase Failed, event
// UpgradeFailed; the deployed revision keeps serving; tried again with
// backoff, at most remediation.maxAttempts times for the same values and chart.
func (r *Reconciler) upgrade(ctx context.Context, o *observation) (ctrl.Result, error) {
	return r.act(ctx, o, helmAction{
		verb:      "Upgrade",
		succeeded: status.ReasonUpgradeSucceeded,
		failed:    status.ReasonUpgradeFailed,
		// A rollback's labels stay with the rollback.
		clear: []string{storage.LabelRollbackTo, storage.LabelRollbackGeneration, storage.LabelFailedValuesDigest, storage.LabelFailedChartDigest, storage.LabelReady, storage.LabelTest, storage.LabelTestedAt},
		do: func(ctx context.Context, c *helm.Client, s helm.Spec) (*helm.Release, error) {
			return c.Upgrade(ctx, s)
		},
	})
}
