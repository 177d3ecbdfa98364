package reconcile

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/storage"
)

// stalled reports whether the deployed revision, written by rudder for the
// wanted digests, has not become Ready within the kind's readinessTimeout
// after its deploy and was never seen Ready. It assesses readiness only once
// the deadline has passed.
func (r *Reconciler) stalled(ctx context.Context, o *observation) bool {
	f := o.Facts
	if r.Watch.Remediation.ReadinessTimeout == 0 || f.Deployed == nil || o.Deployed == nil ||
		!plan.WrittenByRudder(f.Deployed) || plan.DigestsOf(f.Deployed) != f.Want {
		return false
	}
	if r.readinessDeadline(o) > 0 || f.Deployed.Labels[storage.LabelReady] == "true" {
		return false
	}
	r.assess(ctx, o, false)
	return !o.Health.Ready
}

// readinessDeadline returns how long the deployed revision has left to
// become Ready; 0 when it has no deadline or the deadline has passed.
func (r *Reconciler) readinessDeadline(o *observation) time.Duration {
	t := r.Watch.Remediation.ReadinessTimeout
	if t == 0 || o.Deployed == nil || o.Deployed.Updated.IsZero() {
		return 0
	}
	return max(0, o.Deployed.Updated.Add(t).Sub(r.now()))
}

// markReady labels the deployed revision LabelReady once it is first seen
// Ready, when the kind has a readiness timeout: a revision Ready once is past
// its timeout for good, across restarts too.
func (r *Reconciler) markReady(ctx context.Context, o *observation) {
	d := o.Facts.Deployed
	if r.Watch.Remediation.ReadinessTimeout == 0 || o.Health == nil || !o.Health.Ready ||
		!plan.WrittenByRudder(d) || d.Labels[storage.LabelReady] == "true" {
		return
	}
	hc, err := r.helmFor(o)
	if err == nil {
		_, err = hc.Label(o.Release.Name, d.Number, map[string]string{storage.LabelReady: "true"})
	}
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Cannot mark a revision Ready", "revision", d.Number)
	}
}

// remediate rolls the release back after the wanted spec failed — attempts
// exhausted, or a revision not Ready within the readiness timeout — to the
// revision RemediationTarget names. The new revision carries the failed
// digests (LabelFailedValuesDigest, LabelFailedChartDigest), so that plan
// holds it until the spec or the chart changes, across restarts too.
//
// Precondition: remediation strategy rollback; RemediationTarget is not nil.
// On success: Released False (RolledBackAfterFailure); event
// RolledBackAfterFailure. On failure: Released False (RemediationFailed),
// event RemediationFailed; no other remediation for these digests.
func (r *Reconciler) remediate(ctx context.Context, o *observation) (ctrl.Result, error) {
	f := o.Facts
	target := plan.RemediationTarget(f)
	why := fmt.Sprintf("%d attempts to deploy the spec failed, the last with: %s", o.Failure.Count, o.Failure.Message)
	if f.Stalled {
		why = fmt.Sprintf("revision %d was not Ready within %s of its deploy: %s", f.Deployed.Number,
			r.Watch.Remediation.ReadinessTimeout, o.Health.Message)
	} else if f.TestFailed {
		why = status.TestFailure(&o.Observation)
	}
	desc := status.Cut(fmt.Sprintf("Rollback to %d: %s", target.Number, why), 400)
	hc, err := r.helmFor(o)
	if err != nil {
		return ctrl.Result{}, err
	}
	rel, err := r.helmRollback(ctx, o, hc, target.Number, map[string]string{
		storage.LabelFailedValuesDigest: f.Want.Values, storage.LabelFailedChartDigest: f.Want.Chart,
		storage.LabelRollbackTo: "null", storage.LabelRollbackGeneration: "null", storage.LabelReady: "null",
	}, desc)
	if err != nil {
		r.memory.recordFailure(o.key, f.Want, status.ReasonRemediationFailed, err.Error(), r.now())
		r.Recorder.Eventf(o.Resource, nil, corev1.EventTypeWarning, status.ReasonRemediationFailed, "Rollback", "%s; %s", why, err.Error())
		o.Outcome = &status.Outcome{Phase: status.PhaseFailed, Reason: status.ReasonRemediationFailed, Failed: true,
			Message: fmt.Sprintf("%s; the rollback to revision %d failed: %v. Change the spec to try again", why, target.Number, err)}
		return ctrl.Result{RequeueAfter: r.Watch.ReconcilePeriod}, nil
	}
	ctrl.LoggerFrom(ctx).Info("Rolled back a failed spec", "to", target.Number, "revision", rel.Revision, "why", why)
	r.Recorder.Eventf(o.Resource, nil, corev1.EventTypeWarning, status.ReasonRemediated, "Rollback",
		"Rolled back to revision %d as revision %d: %s; held there until the spec or the chart changes", target.Number, rel.Revision, why)
	o.Outcome = &status.Outcome{Phase: status.PhaseFailed, Reason: status.ReasonRemediated, Failed: true,
		Message: fmt.Sprintf("%s; rolled back to revision %d as revision %d", why, target.Number, rel.Revision)}
	return ctrl.Result{RequeueAfter: 250 * time.Millisecond}, nil
}

// uninstallFailedInstall uninstalls a release whose install failed, as the
// kind's remediation.installFailure: uninstall asks; the next attempt, after
// backoff, installs afresh.
//
// Precondition: no revision was ever deployed; the newest one failed.
// Sets: Released False (InstallFailed); event FailedInstallUninstalled; on a
// failed uninstall, Released False (UninstallFailed).
func (r *Reconciler) uninstallFailedInstall(ctx context.Context, o *observation) (ctrl.Result, error) {
	if err := r.uninstallRelease(o); err != nil {
		return ctrl.Result{}, err
	}
	why := fmt.Sprintf("revision %d failed", o.Facts.Latest.Number)
	if o.Latest != nil && o.Latest.Description != "" {
		why = o.Latest.Description
	}
	ctrl.LoggerFrom(ctx).Info("Uninstalled a failed install", "revision", o.Facts.Latest.Number)
	r.Recorder.Eventf(o.Resource, nil, corev1.EventTypeNormal, status.ReasonFailedInstallGone, "Uninstall",
		"Uninstalled release %s, whose install failed (%s), as remediation.installFailure: uninstall asks", o.Release.Name, why)
	r.memory.unexpect(o.key)
	o.Outcome = &status.Outcome{Phase: status.PhaseFailed, Reason: status.ReasonInstallFailed, Failed: true,
		Message: fmt.Sprintf("%s; uninstalled, as remediation.installFailure: uninstall asks", why)}
	return ctrl.Result{RequeueAfter: max(o.Failure.RetryIn(r.now()), 250*time.Millisecond)}, nil
}
