package status

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rudder-operator/rudder/internal/depends"
	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/stored"
	"github.com/rudder-operator/rudder/internal/valuesfrom"
)

// Compute derives status from what o observed, and from the outcome of
// this reconcile's Helm action until storage shows it. prev is the status as
// read: observedGeneration moves only to a generation rudder acted on.
func Compute(o *Observation, prev Status, now time.Time) Status {
	gen := o.Resource.GetGeneration()
	st := Status{ObservedGeneration: prev.ObservedGeneration, Conditions: prev.Conditions, Release: releaseStatus(o)}
	st.LastHandledTestAt = prev.LastHandledTestAt
	if o.TestHandled != "" {
		st.LastHandledTestAt = o.TestHandled
	}
	if actedOn(o) {
		st.ObservedGeneration = gen
	}
	if h := o.Health; h != nil {
		st.Replicas, st.ReadyReplicas = h.Replicas, h.ReadyReplicas
	}
	rel := released(o)
	hooks := hookConditions(o)
	rdy := readiness(o, blocking(o, hooks))
	set := func(c metav1.Condition) {
		c.ObservedGeneration, c.LastTransitionTime = gen, metav1.NewTime(now)
		meta.SetStatusCondition(&st.Conditions, c)
	}
	set(rel)
	// Ready describes the objects of the deployed revision: it is as old as
	// the generation rudder last acted on.
	rdy.ObservedGeneration, rdy.LastTransitionTime = st.ObservedGeneration, metav1.NewTime(now)
	meta.SetStatusCondition(&st.Conditions, rdy)
	for _, c := range hooks {
		set(c)
	}
	if c := OutOfBandCondition(o); c != nil {
		set(*c)
	} else {
		meta.RemoveStatusCondition(&st.Conditions, ConditionOutOfBand)
	}
	if c := testedCondition(o); c != nil {
		set(*c)
	} else if prev := meta.FindStatusCondition(st.Conditions, ConditionTested); prev != nil && prev.Reason == ReasonTestPending {
		meta.RemoveStatusCondition(&st.Conditions, ConditionTested) // the revision awaiting its tests is gone
	}
	switch c := DriftCondition(o); {
	case c != nil:
		set(*c)
	case !o.WarnDrift:
		meta.RemoveStatusCondition(&st.Conditions, ConditionDrifted)
	}
	if o.Facts.Paused {
		set(metav1.Condition{Type: ConditionPaused, Status: metav1.ConditionTrue, Reason: "Paused",
			Message: fmt.Sprintf("rudder does not install, upgrade or repair this release; remove the annotation %s to resume", AnnotationPaused)})
	} else {
		meta.RemoveStatusCondition(&st.Conditions, ConditionPaused)
	}
	st.Phase, st.Message = phase(o, rel, rdy)
	return st
}

// actedOn reports whether this reconcile settles the resource's current
// generation: its values and chart are deployed, a Helm action ran for them
// (failed or not) or stored a revision for them, or they cannot be computed
// at all, or a hook failed on them. A wait, a hold, an unlock or a pause
// claims nothing: observedGeneration then
// stays at the generation rudder last acted on.
func actedOn(o *Observation) bool {
	f := o.Facts
	switch {
	case f.ValuesErr != nil || f.RollbackErr != nil || f.HookErr != nil:
		return true // judged: they fail, as the conditions say
	case o.Outcome != nil:
		return o.Outcome.Reason != ReasonUnlocked
	case f.Paused:
		return false
	case f.Deployed != nil && plan.DigestsOf(f.Deployed) == f.Want:
		return true
	default: // the newest revision rudder made was made from them, and failed
		return f.Latest != nil && plan.WrittenByRudder(f.Latest) && plan.DigestsOf(f.Latest) == f.Want
	}
}

// released says whether the wanted values and chart are deployed.
func released(o *Observation) metav1.Condition {
	c := metav1.Condition{Type: ConditionReleased}
	f := o.Facts
	switch {
	case o.Outcome != nil && o.Outcome.Failed:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, o.Outcome.Reason, o.Outcome.Message
	case o.Outcome != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, o.Outcome.Reason, o.Outcome.Message
	case f.HookErr != nil:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonHookFailed
		c.Message = fmt.Sprintf("Waiting for %v", f.HookErr)
	case f.RollbackErr != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ReasonRollbackInvalid, f.RollbackErr.Error()
	case f.RollbackTo > 0 && f.RolledBackAt == f.Generation && f.Deployed != nil:
		c.Status, c.Reason = metav1.ConditionTrue, ReasonRolledBack
		c.Message = fmt.Sprintf("Rolled back to revision %d (now revision %d) as annotation %s asks; it stays there until the spec changes or the annotation is removed",
			f.RollbackTo, f.Deployed.Number, AnnotationRollbackTo)
	case o.Step == plan.StepDepend:
		e, _ := depends.IsError(f.DependsErr)
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, string(e.Reason), e.Message
		if e.Reason == depends.ReasonNotReady {
			c.Status = metav1.ConditionUnknown
			c.Message = fmt.Sprintf("%s before the %s (annotation %s)", e.Message, dependentAction(f), depends.Annotation)
		}
	case o.Step == plan.StepGated:
		g := o.Gate
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, g.Result.Reason, g.Result.Message
		switch {
		case g.Err != nil:
			c.Status, c.Reason = metav1.ConditionFalse, ReasonUpgradeGated
			c.Message = fmt.Sprintf("Hook %s cannot tell whether the upgrade may go ahead: %v", g.Hook, g.Err)
		case g.Result.Failed:
			c.Status = metav1.ConditionFalse
		}
		if c.Reason == "" {
			c.Reason = ReasonUpgradeGated
		}
	case errors.As(f.ValuesErr, new(ValuesFromError)):
		c.Status, c.Reason = metav1.ConditionFalse, ReasonValuesFromInvalid
		c.Message = fmt.Sprintf("Cannot read the release values from ConfigMaps and Secrets: %v", f.ValuesErr)
		if valuesfrom.Fixable(f.ValuesErr) {
			c.Reason = ReasonValuesFromNotReady
		}
	case errors.As(f.ValuesErr, new(ConditionError)):
		var ce ConditionError
		errors.As(f.ValuesErr, &ce)
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ce.Reason, ce.Error()
	case f.ValuesErr != nil:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonValuesInvalid
		c.Message = fmt.Sprintf("Cannot compute the release values: %v; fix the watch's overrideValues or the spec", f.ValuesErr)
	case f.Latest != nil && f.Latest.Status == "uninstalled":
		c.Status, c.Reason = metav1.ConditionFalse, ReasonOutOfBand
		c.Message = fmt.Sprintf("Revision %d was uninstalled by another Helm client, which kept the history; rudder installs the release again", f.Latest.Number)
		if plan.KeepsUninstall(f) {
			c.Message = fmt.Sprintf("Revision %d was uninstalled by another Helm client, which kept the history; outOfBand: keep leaves it so until the spec changes", f.Latest.Number)
		}
	case plan.Stuck(f):
		c.Status, c.Reason = metav1.ConditionFalse, ReasonOutOfBand
		c.Message = fmt.Sprintf("No revision is deployed and Helm cannot upgrade from revision %d, which is %q; run helm rollback to a deployed revision, or delete the resource to uninstall the release",
			f.Latest.Number, f.Latest.Status)
	case f.Paused && (f.Deployed == nil || plan.DigestsOf(f.Deployed) != f.Want):
		c.Status, c.Reason = metav1.ConditionUnknown, "Paused"
		c.Message = fmt.Sprintf("The spec's changes wait until the annotation %s is removed", AnnotationPaused)
	case f.Deployed != nil && plan.HeldAfterRemediation(f):
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ReasonRemediated, remediatedMessage(o)
	case f.Deployed != nil && plan.DigestsOf(f.Deployed) == f.Want && !plan.ServedOutOfBand(f):
		c.Status, c.Reason = metav1.ConditionTrue, ReasonUpgradeSucceeded
		if f.Deployed.Number == 1 {
			c.Reason = ReasonInstallSucceeded
		}
		c.Message = fmt.Sprintf("Revision %d is deployed", f.Deployed.Number)
	case o.Failure.Count >= f.Remediation.MaxAttempts:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonRetriesExhausted
		c.Message = fmt.Sprintf("Gave up after %d failed tries with these values and this chart; change the spec to try again. Last error: %s",
			o.Failure.Count, o.Failure.Message)
	case o.Failure.Count > 0:
		c.Status, c.Reason = metav1.ConditionFalse, o.Failure.Reason
		c.Message = fmt.Sprintf("%s (try %d of %d; next in %s)", o.Failure.Message, o.Failure.Count, f.Remediation.MaxAttempts, f.RetryIn.Round(time.Second))
	case plan.ServedOutOfBand(f):
		c.Status, c.Reason = metav1.ConditionUnknown, ReasonOutOfBand
		c.Message = fmt.Sprintf("Revision %d was written by another Helm client; see the %s condition", f.Serving.Number, ConditionOutOfBand)
	case o.Latest != nil && plan.DigestsOf(f.Latest) == f.Want:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ReasonUpgradeFailed, o.Latest.Description
		if f.Deployed == nil {
			c.Reason = ReasonInstallFailed
		}
	case plan.AwaitsOutOfBand(f):
		c.Status, c.Reason = metav1.ConditionUnknown, ReasonPending
		c.Message = fmt.Sprintf("Revision %d is %s, held by another writer (not rudder); rudder waits for it to finish, unless the spec changes",
			f.Foreign.Number, f.Foreign.Status)
	case f.Latest != nil && plan.IsPending(f.Latest.Status):
		c.Status, c.Reason = metav1.ConditionUnknown, ReasonPending
		c.Message = fmt.Sprintf("Revision %d is %s, held by another writer (not rudder); rudder waits for it to finish",
			f.Latest.Number, f.Latest.Status)
		if h := f.Latest.Labels[stored.LabelHolder]; h == f.Self || plan.LeftByRudder(f.Latest, f.Self) {
			c.Message = fmt.Sprintf("Revision %d is %s by rudder %s", f.Latest.Number, f.Latest.Status, h)
		}
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, ReasonNotReleased, "The release is not installed yet"
	}
	return c
}

// blocking returns the hook conditions that keep the resource from being Ready.
func blocking(o *Observation, conds []metav1.Condition) []metav1.Condition {
	var out []metav1.Condition
	for i, run := range o.Hooks {
		if run.Result.BlocksReady && conds[i].Status != metav1.ConditionTrue {
			out = append(out, conds[i])
		}
	}
	return out
}

// readiness says whether every object of the deployed revision is ready and
// no hook holds readiness back.
func readiness(o *Observation, hooks []metav1.Condition) metav1.Condition {
	c := metav1.Condition{Type: ConditionReady}
	h := o.Health
	var waiting *metav1.Condition
	if len(hooks) > 0 {
		waiting = &hooks[0]
	}
	switch {
	case o.Outcome != nil && !o.Outcome.Failed && o.Outcome.Reason != ReasonUnlocked:
		// This reconcile just changed the release: what was assessed before
		// it is not the new revision's readiness.
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ReasonProgressing, o.Outcome.Message
	case h != nil && h.Ready && waiting != nil:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonWaitingForHook
		c.Message = fmt.Sprintf("%s is %s: %s", waiting.Type, waiting.Status, waiting.Message)
	case h == nil && o.Facts.Deleting:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonUninstalling
		c.Message = "The resource is being deleted: its release is uninstalled"
	case h == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ReasonNotReleased, "No revision is deployed yet"
	case o.Facts.Stalled:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonReadinessTimeout
		c.Message = fmt.Sprintf("Revision %d was not Ready within remediation.readinessTimeout %s: %s",
			o.Facts.Deployed.Number, o.Facts.Remediation.ReadinessTimeout, h.Message)
	case o.Facts.TestFailed:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonTestFailed
		c.Message = TestFailure(o)
	case o.Facts.Deployed != nil && plan.HeldAfterRemediation(o.Facts):
		c.Status, c.Reason = metav1.ConditionFalse, ReasonRemediated
		c.Message = fmt.Sprintf("%s; its objects: %s", remediatedMessage(o), h.summary())
	case h.Ready:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, ReasonReady, h.summary()
	case h.Failed:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ReasonObjectFail, h.Message
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ReasonProgressing, h.Message
	}
	return c
}

// phase sums the conditions up in the seed's vocabulary.
func phase(o *Observation, rel, rdy metav1.Condition) (string, string) {
	switch {
	case rel.Status == metav1.ConditionFalse:
		return PhaseFailed, rel.Message
	case o.Health != nil && o.Health.Failed:
		return PhaseFailed, rdy.Message
	case o.Outcome != nil:
		return o.Outcome.Phase, rel.Message
	case plan.Assessed(o.Facts) == nil:
		if o.Facts.Latest != nil {
			return PhaseDeploying, rel.Message
		}
		if o.Step == plan.StepDepend {
			return PhasePending, rel.Message
		}
		return PhasePending, "Waiting for the release to be installed"
	case o.Health == nil:
		// The deployed revision's objects were not read: the resource is
		// being deleted.
		return PhaseUpdating, rdy.Message
	case rdy.Status == metav1.ConditionTrue:
		return PhaseRunning, o.Health.summary()
	case rdy.Reason == ReasonTestFailed:
		return PhaseFailed, rdy.Message
	case rdy.Reason == ReasonWaitingForHook:
		return PhaseDeploying, rdy.Message
	case plan.Assessed(o.Facts).Number == 1:
		return PhaseDeploying, o.Health.summary()
	default:
		return PhaseUpdating, o.Health.summary()
	}
}

func releaseStatus(o *Observation) *ReleaseStatus {
	rs := &ReleaseStatus{Name: o.Release.Name}
	rev, d := o.Deployed, plan.Assessed(o.Facts)
	if rev == nil {
		rev, d = o.Latest, o.Facts.Latest
	}
	if d != nil {
		rs.Revision, rs.Status = d.Number, d.Status
		rs.ValuesDigest, rs.ChartDigest = d.Labels[stored.LabelValuesDigest], d.Labels[stored.LabelChartDigest]
	}
	if rev != nil {
		rs.Chart, rs.ChartVersion, rs.AppVersion = rev.Chart, rev.ChartVersion, rev.AppVersion
		if !rev.Updated.IsZero() {
			t := metav1.NewTime(rev.Updated)
			rs.Updated = &t
		}
	}
	return rs
}

// dependentAction names what a resource's dependencies hold back.
func dependentAction(f plan.Facts) string {
	if f.Deployed == nil && !f.EverDeployed {
		return "install"
	}
	return "upgrade"
}

// remediatedMessage says why the deployed rollback was made and how to leave.
func remediatedMessage(o *Observation) string {
	why := "the spec failed"
	if o.Deployed != nil && o.Deployed.Description != "" {
		why = o.Deployed.Description
	}
	return fmt.Sprintf("%s. Revision %d serves; rudder holds it until the spec or the chart changes", why, o.Facts.Deployed.Number)
}
