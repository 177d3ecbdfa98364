package action

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/stored"
)

// Remediate rolls the release back after the wanted spec failed — attempts
// exhausted, or a revision not Ready within the readiness timeout — to the
// revision plan.RemediationTarget names. The new revision carries the failed
// digests (LabelFailedValuesDigest, LabelFailedChartDigest), so that plan
// holds it until the spec or the chart changes, across restarts too.
//
// Precondition: remediation strategy rollback; RemediationTarget is not nil.
// On success: Released False (RolledBackAfterFailure); event
// RolledBackAfterFailure. On failure: Released False (RemediationFailed),
// event RemediationFailed; no other remediation for these digests.
type Remediate struct {
	Writer
	MaxHistory       int           // revisions kept in storage (watches.yaml maxHistory)
	ReadinessTimeout time.Duration // remediation.readinessTimeout, as the message names it
	Period           time.Duration // the kind's reconcile period: when a failed remediation is looked at again
}

// Run rolls rel back to its remediation target.
func (s Remediate) Run(ctx context.Context, rel *Release) (Result, error) {
	f := rel.Facts
	target := plan.RemediationTarget(f)
	why := fmt.Sprintf("%d attempts to deploy the spec failed, the last with: %s", rel.Failure.Count, rel.Failure.Message)
	if f.Stalled {
		why = fmt.Sprintf("revision %d was not Ready within %s of its deploy: %s", f.Deployed.Number,
			s.ReadinessTimeout, rel.Health.Message)
	} else if f.TestFailed {
		why = status.TestFailure(rel.Observation)
	}
	desc := status.Cut(fmt.Sprintf("Rollback to %d: %s", target.Number, why), 400)
	written, err := s.rollback(ctx, rel, s.MaxHistory, target.Number, map[string]string{
		stored.LabelFailedValuesDigest: f.Want.Values, stored.LabelFailedChartDigest: f.Want.Chart,
		stored.LabelRollbackTo: "null", stored.LabelRollbackGeneration: "null", stored.LabelReady: "null",
	}, desc)
	if err != nil {
		s.Memory.RecordFailure(rel.Key, f.Want, status.ReasonRemediationFailed, err.Error(), s.Clock.Now())
		s.Events.Eventf(rel.Resource, nil, corev1.EventTypeWarning, status.ReasonRemediationFailed, "Rollback", "%s; %s", why, err.Error())
		rel.Outcome = &status.Outcome{Phase: status.PhaseFailed, Reason: status.ReasonRemediationFailed, Failed: true,
			Message: fmt.Sprintf("%s; the rollback to revision %d failed: %v. Change the spec to try again", why, target.Number, err)}
		return Result{Result: ctrl.Result{RequeueAfter: s.Period}}, nil
	}
	ctrl.LoggerFrom(ctx).Info("Rolled back a failed spec", "to", target.Number, "revision", written.Revision, "why", why)
	s.Events.Eventf(rel.Resource, nil, corev1.EventTypeWarning, status.ReasonRemediated, "Rollback",
		"Rolled back to revision %d as revision %d: %s; held there until the spec or the chart changes", target.Number, written.Revision, why)
	rel.Outcome = &status.Outcome{Phase: status.PhaseFailed, Reason: status.ReasonRemediated, Failed: true,
		Message: fmt.Sprintf("%s; rolled back to revision %d as revision %d", why, target.Number, written.Revision)}
	return Result{Result: ctrl.Result{RequeueAfter: 250 * time.Millisecond}}, nil
}

// DropInstall uninstalls a release whose install failed, as the kind's
// remediation.installFailure: uninstall asks; the next attempt, after
// backoff, installs afresh.
//
// Precondition: no revision was ever deployed; the newest one failed.
// Sets: Released False (InstallFailed); event FailedInstallUninstalled; on a
// failed uninstall, Released False (UninstallFailed).
type DropInstall struct {
	Writer
}

// Run uninstalls rel.
func (s DropInstall) Run(ctx context.Context, rel *Release) (Result, error) {
	if err := s.uninstall(rel); err != nil {
		return Result{}, err
	}
	why := fmt.Sprintf("revision %d failed", rel.Facts.Latest.Number)
	if rel.Latest != nil && rel.Latest.Description != "" {
		why = rel.Latest.Description
	}
	ctrl.LoggerFrom(ctx).Info("Uninstalled a failed install", "revision", rel.Facts.Latest.Number)
	s.Events.Eventf(rel.Resource, nil, corev1.EventTypeNormal, status.ReasonFailedInstallGone, "Uninstall",
		"Uninstalled release %s, whose install failed (%s), as remediation.installFailure: uninstall asks", rel.Release.Name, why)
	s.Memory.Unexpect(rel.Key)
	rel.Outcome = &status.Outcome{Phase: status.PhaseFailed, Reason: status.ReasonInstallFailed, Failed: true,
		Message: fmt.Sprintf("%s; uninstalled, as remediation.installFailure: uninstall asks", why)}
	return Result{Result: ctrl.Result{RequeueAfter: max(rel.Failure.RetryIn(s.Clock.Now()), 250*time.Millisecond)}}, nil
}
