package reconcile

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/storage"
	"github.com/rudder-operator/rudder/internal/watches"
)

// remediationTarget returns the revision a rollback remediating the wanted
// spec goes back to, nil when the kind's policy or the history allows none:
// for a revision not Ready in time or failing its tests, the one deployed before it; for failed
// upgrade attempts, the deployed one, and only when the last attempt stored a
// revision (which may have changed objects; a render error changed nothing).
// One failed remediation ends remediation for these digests.
func remediationTarget(f facts) *storage.Revision {
	if f.remediation.Strategy != watches.StrategyRollback || f.remediationFailed || f.deployed == nil {
		return nil
	}
	if f.stalled || f.testFailed {
		return f.previous
	}
	if l := f.latest; l != nil && l.Status == "failed" && l.Number > f.deployed.Number && digestsOf(l) == f.want {
		return f.deployed
	}
	return nil
}

// heldAfterRemediation reports whether the deployed revision is a rollback
// rudder made because the wanted digests failed: it stays until they change.
func heldAfterRemediation(f facts) bool {
	d := f.deployed
	return writtenByRudder(d) && d.Labels[LabelFailedValuesDigest] != "" && d.Labels[LabelFailedValuesDigest] == f.want.values &&
		d.Labels[LabelFailedChartDigest] == f.want.chart
}

// previousDeployed returns the newest revision older than deployed that was
// deployed once (Helm marks it superseded); nil when none is stored.
func previousDeployed(history []storage.Revision, deployed *storage.Revision) *storage.Revision {
	for i := range history {
		if deployed != nil && history[i].Number < deployed.Number && history[i].Status == "superseded" {
			return &history[i]
		}
	}
	return nil
}

// stalled reports whether the deployed revision, written by rudder for the
// wanted digests, has not become Ready within the kind's readinessTimeout
// after its deploy and was never seen Ready. It assesses readiness only once
// the deadline has passed.
func (r *Reconciler) stalled(ctx context.Context, o *observation) bool {
	f := o.facts
	if r.Watch.Remediation.ReadinessTimeout == 0 || f.deployed == nil || o.deployed == nil ||
		!writtenByRudder(f.deployed) || digestsOf(f.deployed) != f.want {
		return false
	}
	if r.readinessDeadline(o) > 0 || f.deployed.Labels[LabelReady] == "true" {
		return false
	}
	r.assess(ctx, o, false)
	return !o.health.ready
}

// readinessDeadline returns how long the deployed revision has left to
// become Ready; 0 when it has no deadline or the deadline has passed.
func (r *Reconciler) readinessDeadline(o *observation) time.Duration {
	t := r.Watch.Remediation.ReadinessTimeout
	if t == 0 || o.deployed == nil || o.deployed.Updated.IsZero() {
		return 0
	}
	return max(0, o.deployed.Updated.Add(t).Sub(r.now()))
}

// markReady labels the deployed revision LabelReady once it is first seen
// Ready, when the kind has a readiness timeout: a revision Ready once is past
// its timeout for good, across restarts too.
func (r *Reconciler) markReady(ctx context.Context, o *observation) {
	d := o.facts.deployed
	if r.Watch.Remediation.ReadinessTimeout == 0 || o.health == nil || !o.health.ready ||
		!writtenByRudder(d) || d.Labels[LabelReady] == "true" {
		return
	}
	hc, err := r.helmFor(o)
	if err == nil {
		_, err = hc.Label(o.release.Name, d.Number, map[string]string{LabelReady: "true"})
	}
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Cannot mark a revision Ready", "revision", d.Number)
	}
}

// remediate rolls the release back after the wanted spec failed — attempts
// exhausted, or a revision not Ready within the readiness timeout — to the
// revision remediationTarget names. The new revision carries the failed
// digests (LabelFailedValuesDigest, LabelFailedChartDigest), so that plan
// holds it until the spec or the chart changes, across restarts too.
//
// Precondition: remediation strategy rollback; remediationTarget is not nil.
// On success: Released False (RolledBackAfterFailure); event
// RolledBackAfterFailure. On failure: Released False (RemediationFailed),
// event RemediationFailed; no other remediation for these digests.
func (r *Reconciler) remediate(ctx context.Context, o *observation) (ctrl.Result, error) {
	f := o.facts
	target := remediationTarget(f)
	why := fmt.Sprintf("%d attempts to deploy the spec failed, the last with: %s", o.failure.count, o.failure.message)
	if f.stalled {
		why = fmt.Sprintf("revision %d was not Ready within %s of its deploy: %s", f.deployed.Number,
			r.Watch.Remediation.ReadinessTimeout, o.health.message)
	} else if f.testFailed {
		why = testFailure(o)
	}
	desc := truncate(fmt.Sprintf("Rollback to %d: %s", target.Number, why), 400)
	hc, err := r.helmFor(o)
	if err != nil {
		return ctrl.Result{}, err
	}
	rel, err := r.helmRollback(ctx, o, hc, target.Number, map[string]string{
		LabelFailedValuesDigest: f.want.values, LabelFailedChartDigest: f.want.chart,
		LabelRollbackTo: "null", LabelRollbackGeneration: "null", LabelReady: "null",
	}, desc)
	if err != nil {
		r.failures.record(o.key, f.want, ReasonRemediationFailed, err.Error(), r.now())
		r.Recorder.Eventf(o.obj, nil, corev1.EventTypeWarning, ReasonRemediationFailed, "Rollback", "%s; %s", why, err.Error())
		o.outcome = &outcome{phase: PhaseFailed, reason: ReasonRemediationFailed, failed: true,
			message: fmt.Sprintf("%s; the rollback to revision %d failed: %v. Change the spec to try again", why, target.Number, err)}
		return ctrl.Result{RequeueAfter: r.Watch.ReconcilePeriod}, nil
	}
	ctrl.LoggerFrom(ctx).Info("Rolled back a failed spec", "to", target.Number, "revision", rel.Revision, "why", why)
	r.Recorder.Eventf(o.obj, nil, corev1.EventTypeWarning, ReasonRemediated, "Rollback",
		"Rolled back to revision %d as revision %d: %s; held there until the spec or the chart changes", target.Number, rel.Revision, why)
	o.outcome = &outcome{phase: PhaseFailed, reason: ReasonRemediated, failed: true,
		message: fmt.Sprintf("%s; rolled back to revision %d as revision %d", why, target.Number, rel.Revision)}
	return ctrl.Result{RequeueAfter: 250 * time.Millisecond}, nil
}

// remediatedMessage says why the deployed rollback was made and how to leave.
func remediatedMessage(o *observation) string {
	why := "the spec failed"
	if o.deployed != nil && o.deployed.Description != "" {
		why = o.deployed.Description
	}
	return fmt.Sprintf("%s. Revision %d serves; rudder holds it until the spec or the chart changes", why, o.facts.deployed.Number)
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
	why := fmt.Sprintf("revision %d failed", o.facts.latest.Number)
	if o.latest != nil && o.latest.Description != "" {
		why = o.latest.Description
	}
	ctrl.LoggerFrom(ctx).Info("Uninstalled a failed install", "revision", o.facts.latest.Number)
	r.Recorder.Eventf(o.obj, nil, corev1.EventTypeNormal, ReasonFailedInstallGone, "Uninstall",
		"Uninstalled release %s, whose install failed (%s), as remediation.installFailure: uninstall asks", o.release.Name, why)
	r.expect.forget(o.key)
	o.outcome = &outcome{phase: PhaseFailed, reason: ReasonInstallFailed, failed: true,
		message: fmt.Sprintf("%s; uninstalled, as remediation.installFailure: uninstall asks", why)}
	return ctrl.Result{RequeueAfter: max(o.failure.retryIn(r.now()), 250*time.Millisecond)}, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
