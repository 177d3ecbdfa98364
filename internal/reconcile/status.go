package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/rudder-operator/rudder/internal/reconcile/status"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/depends"
	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/storage"
	"github.com/rudder-operator/rudder/internal/valuesfrom"
)

// ownedKeys are the keys of .status that Status writes, removed when unset.
var ownedKeys = []string{"observedGeneration", "phase", "message", "replicas", "readyReplicas", "release", "history", "failures", "published", "lastHandledReconcileAt", "lastHandledTestAt", "actingAs"}

// writeStatus computes status from o and patches it onto the custom resource,
// unless nothing changed. When only a rollout's progress changed and the last
// write was less than progressInterval ago, it writes nothing and returns how
// long to wait before the reconcile that writes it.
func (r *Reconciler) writeStatus(ctx context.Context, o *observation) (time.Duration, error) {
	current, _ := o.obj.Object["status"].(map[string]any)
	var prev status.Status
	if current != nil {
		_ = runtime.DefaultUnstructuredConverter.FromUnstructured(current, &prev)
	}
	st := computeStatus(o, prev, r.now())
	st.History = r.history(ctx, o)
	st.LastHandledReconcileAt = o.obj.GetAnnotations()[status.AnnotationReconcileRequestedAt]
	st.ActingAs = o.actor.String()
	if fl, ok := r.memory.lastFailure(o.key); ok && fl.count > 0 && fl.want == o.facts.Want {
		st.Failures = fl.status()
	}
	r.memory.setState(o.key, stateOfStatus(o, &st))
	pub := publish(o, takenKeys(hookStatus(o)))
	pub.into(&st, prev.Published, r.now())
	computed, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&st)
	if err != nil {
		return 0, fmt.Errorf("encoding status: %w", err)
	}
	next := make(map[string]any, len(current)+len(computed))
	for k, v := range current {
		next[k] = v
	}
	for _, k := range ownedKeys {
		delete(next, k)
	}
	pub.apply(next, prev.Published)
	for k, v := range hookStatus(o) {
		if slices.Contains(ownedKeys, k) || k == "conditions" {
			continue // rudder's own keys are not a hook's to write
		}
		if v == nil {
			delete(next, k)
			continue
		}
		next[k] = v
	}
	for k, v := range computed {
		next[k] = v
	}
	next = redactAll(next, r.memory.secretsOf(o.key)).(map[string]any)
	fitConditions(next)
	// The cache may not show our last write yet: skipping is safe only when
	// it shows exactly what we last wrote (or nothing was written since start).
	if equality.Semantic.DeepEqual(current, next) && r.memory.shows(o.key, o.obj.GetResourceVersion()) {
		return 0, nil
	}
	if progressOnly(current, next) {
		if wait := r.memory.progressWait(o.key, r.now()); wait > 0 {
			return wait, nil
		}
	}
	body, err := json.Marshal(map[string]any{"status": mergePatch(current, next)})
	if err != nil {
		return 0, fmt.Errorf("encoding status: %w", err)
	}
	// Only the answer's resourceVersion is read: asked for as metadata, the
	// patched resource is neither encoded whole by the API server nor decoded
	// whole here, on every status write.
	patched := &metav1.PartialObjectMetadata{}
	patched.SetGroupVersionKind(o.obj.GroupVersionKind())
	patched.SetNamespace(o.obj.GetNamespace())
	patched.SetName(o.obj.GetName())
	if err := r.Client.Status().Patch(ctx, patched, client.RawPatch(types.MergePatchType, body)); err != nil {
		return 0, fmt.Errorf("writing status: %w", err)
	}
	r.memory.wrote(o.key, patched.GetResourceVersion(), r.now())
	return 0, nil
}

// maxConditionMessage is the most characters a condition's message may hold:
// metav1.Condition's limit, which the CRDs rudder generates carry
// (internal/crdgen). The API server refuses a whole status write for one
// longer message, and an error (a chart's failed render, a hook's) can be.
const maxConditionMessage = 32768

// cutMark ends a condition message cut to fit.
const cutMark = "… (cut)"

// fitConditions cuts every condition message of status (a status as
// written) that is longer than maxConditionMessage characters, counted as
// the API server counts them (runes), to fit, ending it with cutMark. It
// runs after redaction, so that a cut never leaves part of a redacted value
// behind. It changes no map or list of status in place: they may be the
// cached resource's.
func fitConditions(status map[string]any) {
	list, _ := status["conditions"].([]any)
	var out []any
	for i, item := range list {
		c, _ := item.(map[string]any)
		msg, _ := c["message"].(string)
		if utf8.RuneCountInString(msg) <= maxConditionMessage {
			continue
		}
		if out == nil {
			out = slices.Clone(list)
		}
		cut := make(map[string]any, len(c))
		for k, v := range c {
			cut[k] = v
		}
		cut["message"] = cutMessage(msg, maxConditionMessage)
		out[i] = cut
	}
	if out != nil {
		status["conditions"] = out
	}
}

// cutMessage returns msg cut to at most limit runes, ending with cutMark
// when cut. It cuts between runes, so valid UTF-8 stays valid.
func cutMessage(msg string, limit int) string {
	if utf8.RuneCountInString(msg) <= limit {
		return msg
	}
	keep, n := limit-utf8.RuneCountInString(cutMark), 0
	for i := range msg {
		if n == keep {
			return msg[:i] + cutMark
		}
		n++
	}
	return msg
}

// mergePatch returns a JSON merge patch turning current into next. It sends
// every key of next, not a diff against the cached object: a diff would leave
// out what the stale cache already "has" and the server does not. A key of
// current that next lacks is sent as null, at any depth, since a merge patch
// merges maps (status.network losing "netmask", say).
func mergePatch(current, next map[string]any) map[string]any {
	patch := make(map[string]any, len(next))
	for k, v := range next {
		cm, wasMap := current[k].(map[string]any)
		nm, isMap := v.(map[string]any)
		if wasMap && isMap {
			patch[k] = mergePatch(cm, nm)
			continue
		}
		patch[k] = v
	}
	for k := range current {
		if _, kept := next[k]; !kept {
			patch[k] = nil
		}
	}
	return patch
}

// computeStatus derives status from what o observed, and from the outcome of
// this reconcile's Helm action until storage shows it. prev is the status as
// read: observedGeneration moves only to a generation rudder acted on.
func computeStatus(o *observation, prev status.Status, now time.Time) status.Status {
	gen := o.obj.GetGeneration()
	st := status.Status{ObservedGeneration: prev.ObservedGeneration, Conditions: prev.Conditions, Release: releaseStatus(o)}
	st.LastHandledTestAt = prev.LastHandledTestAt
	if o.testHandled != "" {
		st.LastHandledTestAt = o.testHandled
	}
	if actedOn(o) {
		st.ObservedGeneration = gen
	}
	if h := o.health; h != nil {
		st.Replicas, st.ReadyReplicas = h.replicas, h.readyReplicas
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
	if c := outOfBandCondition(o); c != nil {
		set(*c)
	} else {
		meta.RemoveStatusCondition(&st.Conditions, status.ConditionOutOfBand)
	}
	if c := testedCondition(o); c != nil {
		set(*c)
	} else if prev := meta.FindStatusCondition(st.Conditions, status.ConditionTested); prev != nil && prev.Reason == status.ReasonTestPending {
		meta.RemoveStatusCondition(&st.Conditions, status.ConditionTested) // the revision awaiting its tests is gone
	}
	switch c := driftCondition(o); {
	case c != nil:
		set(*c)
	case !o.warnDrift:
		meta.RemoveStatusCondition(&st.Conditions, status.ConditionDrifted)
	}
	if o.facts.Paused {
		set(metav1.Condition{Type: status.ConditionPaused, Status: metav1.ConditionTrue, Reason: "Paused",
			Message: fmt.Sprintf("rudder does not install, upgrade or repair this release; remove the annotation %s to resume", status.AnnotationPaused)})
	} else {
		meta.RemoveStatusCondition(&st.Conditions, status.ConditionPaused)
	}
	st.Phase, st.Message = phase(o, rel, rdy)
	return st
}

// dependentAction names what a resource's dependencies hold back.
func dependentAction(f plan.Facts) string {
	if f.Deployed == nil && !f.EverDeployed {
		return "install"
	}
	return "upgrade"
}

// conditionOf returns the condition typ of obj's status as read, or nil.
func conditionOf(obj *unstructured.Unstructured, typ string) *metav1.Condition {
	list, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok || m["type"] != typ {
			continue
		}
		var c metav1.Condition
		if runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c) == nil {
			return &c
		}
	}
	return nil
}

// actedOn reports whether this reconcile settles the resource's current
// generation: its values and chart are deployed, a Helm action ran for them
// (failed or not) or stored a revision for them, or they cannot be computed
// at all, or a hook failed on them. A wait, a hold, an unlock or a pause
// claims nothing: observedGeneration then
// stays at the generation rudder last acted on.
func actedOn(o *observation) bool {
	f := o.facts
	switch {
	case f.ValuesErr != nil || f.RollbackErr != nil || f.HookErr != nil:
		return true // judged: they fail, as the conditions say
	case o.outcome != nil:
		return o.outcome.reason != status.ReasonUnlocked
	case f.Paused:
		return false
	case f.Deployed != nil && plan.DigestsOf(f.Deployed) == f.Want:
		return true
	default: // the newest revision rudder made was made from them, and failed
		return f.Latest != nil && plan.WrittenByRudder(f.Latest) && plan.DigestsOf(f.Latest) == f.Want
	}
}

// released says whether the wanted values and chart are deployed.
func released(o *observation) metav1.Condition {
	c := metav1.Condition{Type: status.ConditionReleased}
	f := o.facts
	switch {
	case o.outcome != nil && o.outcome.failed:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, o.outcome.reason, o.outcome.message
	case o.outcome != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, o.outcome.reason, o.outcome.message
	case f.HookErr != nil:
		c.Status, c.Reason = metav1.ConditionFalse, status.ReasonHookFailed
		c.Message = fmt.Sprintf("Waiting for %v", f.HookErr)
	case f.RollbackErr != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, status.ReasonRollbackInvalid, f.RollbackErr.Error()
	case f.RollbackTo > 0 && f.RolledBackAt == f.Generation && f.Deployed != nil:
		c.Status, c.Reason = metav1.ConditionTrue, status.ReasonRolledBack
		c.Message = fmt.Sprintf("Rolled back to revision %d (now revision %d) as annotation %s asks; it stays there until the spec changes or the annotation is removed",
			f.RollbackTo, f.Deployed.Number, status.AnnotationRollbackTo)
	case o.step == plan.StepDepend:
		e, _ := depends.IsError(f.DependsErr)
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, string(e.Reason), e.Message
		if e.Reason == depends.ReasonNotReady {
			c.Status = metav1.ConditionUnknown
			c.Message = fmt.Sprintf("%s before the %s (annotation %s)", e.Message, dependentAction(f), depends.Annotation)
		}
	case o.step == plan.StepGated:
		g := o.gate
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, g.res.Reason, g.res.Message
		switch {
		case g.err != nil:
			c.Status, c.Reason = metav1.ConditionFalse, status.ReasonUpgradeGated
			c.Message = fmt.Sprintf("Hook %s cannot tell whether the upgrade may go ahead: %v", g.hook, g.err)
		case g.res.Failed:
			c.Status = metav1.ConditionFalse
		}
		if c.Reason == "" {
			c.Reason = status.ReasonUpgradeGated
		}
	case errors.As(f.ValuesErr, new(valuesFromError)):
		c.Status, c.Reason = metav1.ConditionFalse, status.ReasonValuesFromInvalid
		c.Message = fmt.Sprintf("Cannot read the release values from ConfigMaps and Secrets: %v", f.ValuesErr)
		if valuesfrom.Fixable(f.ValuesErr) {
			c.Reason = status.ReasonValuesFromNotReady
		}
	case errors.As(f.ValuesErr, new(conditionError)):
		var ce conditionError
		errors.As(f.ValuesErr, &ce)
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ce.reason, ce.Error()
	case f.ValuesErr != nil:
		c.Status, c.Reason = metav1.ConditionFalse, status.ReasonValuesInvalid
		c.Message = fmt.Sprintf("Cannot compute the release values: %v; fix the watch's overrideValues or the spec", f.ValuesErr)
	case f.Latest != nil && f.Latest.Status == "uninstalled":
		c.Status, c.Reason = metav1.ConditionFalse, status.ReasonOutOfBand
		c.Message = fmt.Sprintf("Revision %d was uninstalled by another Helm client, which kept the history; rudder installs the release again", f.Latest.Number)
		if plan.KeepsUninstall(f) {
			c.Message = fmt.Sprintf("Revision %d was uninstalled by another Helm client, which kept the history; outOfBand: keep leaves it so until the spec changes", f.Latest.Number)
		}
	case plan.Stuck(f):
		c.Status, c.Reason = metav1.ConditionFalse, status.ReasonOutOfBand
		c.Message = fmt.Sprintf("No revision is deployed and Helm cannot upgrade from revision %d, which is %q; run helm rollback to a deployed revision, or delete the resource to uninstall the release",
			f.Latest.Number, f.Latest.Status)
	case f.Paused && (f.Deployed == nil || plan.DigestsOf(f.Deployed) != f.Want):
		c.Status, c.Reason = metav1.ConditionUnknown, "Paused"
		c.Message = fmt.Sprintf("The spec's changes wait until the annotation %s is removed", status.AnnotationPaused)
	case f.Deployed != nil && plan.HeldAfterRemediation(f):
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, status.ReasonRemediated, remediatedMessage(o)
	case f.Deployed != nil && plan.WrittenByRudder(f.Deployed) && plan.DigestsOf(f.Deployed) == f.Want:
		c.Status, c.Reason = metav1.ConditionTrue, status.ReasonUpgradeSucceeded
		if f.Deployed.Number == 1 {
			c.Reason = status.ReasonInstallSucceeded
		}
		c.Message = fmt.Sprintf("Revision %d is deployed", f.Deployed.Number)
	case o.failure.count >= f.Remediation.MaxAttempts:
		c.Status, c.Reason = metav1.ConditionFalse, status.ReasonRetriesExhausted
		c.Message = fmt.Sprintf("Gave up after %d failed tries with these values and this chart; change the spec to try again. Last error: %s",
			o.failure.count, o.failure.message)
	case o.failure.count > 0:
		c.Status, c.Reason = metav1.ConditionFalse, o.failure.reason
		c.Message = fmt.Sprintf("%s (try %d of %d; next in %s)", o.failure.message, o.failure.count, f.Remediation.MaxAttempts, f.RetryIn.Round(time.Second))
	case f.Deployed != nil && !plan.WrittenByRudder(f.Deployed):
		c.Status, c.Reason = metav1.ConditionUnknown, status.ReasonOutOfBand
		c.Message = fmt.Sprintf("Revision %d was written by another Helm client; see the %s condition", f.Deployed.Number, status.ConditionOutOfBand)
	case o.latest != nil && plan.DigestsOf(f.Latest) == f.Want:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, status.ReasonUpgradeFailed, o.latest.Description
		if f.Deployed == nil {
			c.Reason = status.ReasonInstallFailed
		}
	case f.Latest != nil && plan.IsPending(f.Latest.Status):
		c.Status, c.Reason = metav1.ConditionUnknown, status.ReasonPending
		c.Message = fmt.Sprintf("Revision %d is %s, held by another writer (not rudder); rudder waits for it to finish",
			f.Latest.Number, f.Latest.Status)
		if h := f.Latest.Labels[storage.LabelHolder]; h == f.Self || plan.LeftByRudder(f.Latest, f.Self) {
			c.Message = fmt.Sprintf("Revision %d is %s by rudder %s", f.Latest.Number, f.Latest.Status, h)
		}
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, status.ReasonNotReleased, "The release is not installed yet"
	}
	return c
}

// blocking returns the hook conditions that keep the resource from being Ready.
func blocking(o *observation, conds []metav1.Condition) []metav1.Condition {
	var out []metav1.Condition
	for i, run := range o.hooks {
		if run.res.BlocksReady && conds[i].Status != metav1.ConditionTrue {
			out = append(out, conds[i])
		}
	}
	return out
}

// readiness says whether every object of the deployed revision is ready and
// no hook holds readiness back.
func readiness(o *observation, hooks []metav1.Condition) metav1.Condition {
	c := metav1.Condition{Type: status.ConditionReady}
	h := o.health
	var waiting *metav1.Condition
	if len(hooks) > 0 {
		waiting = &hooks[0]
	}
	switch {
	case o.outcome != nil && !o.outcome.failed && o.outcome.reason != status.ReasonUnlocked:
		// This reconcile just changed the release: what was assessed before
		// it is not the new revision's readiness.
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, status.ReasonProgressing, o.outcome.message
	case h != nil && h.ready && waiting != nil:
		c.Status, c.Reason = metav1.ConditionFalse, status.ReasonWaitingForHook
		c.Message = fmt.Sprintf("%s is %s: %s", waiting.Type, waiting.Status, waiting.Message)
	case h == nil && o.facts.Deleting:
		c.Status, c.Reason = metav1.ConditionFalse, status.ReasonUninstalling
		c.Message = "The resource is being deleted: its release is uninstalled"
	case h == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, status.ReasonNotReleased, "No revision is deployed yet"
	case o.facts.Stalled:
		c.Status, c.Reason = metav1.ConditionFalse, status.ReasonReadinessTimeout
		c.Message = fmt.Sprintf("Revision %d was not Ready within remediation.readinessTimeout %s: %s",
			o.facts.Deployed.Number, o.facts.Remediation.ReadinessTimeout, h.message)
	case o.facts.TestFailed:
		c.Status, c.Reason = metav1.ConditionFalse, status.ReasonTestFailed
		c.Message = testFailure(o)
	case o.facts.Deployed != nil && plan.HeldAfterRemediation(o.facts):
		c.Status, c.Reason = metav1.ConditionFalse, status.ReasonRemediated
		c.Message = fmt.Sprintf("%s; its objects: %s", remediatedMessage(o), h.summary())
	case h.ready:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, status.ReasonReady, h.summary()
	case h.failed:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, status.ReasonObjectFail, h.message
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, status.ReasonProgressing, h.message
	}
	return c
}

// phase sums the conditions up in the seed's vocabulary.
func phase(o *observation, rel, rdy metav1.Condition) (string, string) {
	switch {
	case rel.Status == metav1.ConditionFalse:
		return status.PhaseFailed, rel.Message
	case o.health != nil && o.health.failed:
		return status.PhaseFailed, rdy.Message
	case o.outcome != nil:
		return o.outcome.phase, rel.Message
	case o.facts.Deployed == nil:
		if o.facts.Latest != nil {
			return status.PhaseDeploying, rel.Message
		}
		if o.step == plan.StepDepend {
			return status.PhasePending, rel.Message
		}
		return status.PhasePending, "Waiting for the release to be installed"
	case o.health == nil:
		// The deployed revision's objects were not read: the resource is
		// being deleted.
		return status.PhaseUpdating, rdy.Message
	case rdy.Status == metav1.ConditionTrue:
		return status.PhaseRunning, o.health.summary()
	case rdy.Reason == status.ReasonTestFailed:
		return status.PhaseFailed, rdy.Message
	case rdy.Reason == status.ReasonWaitingForHook:
		return status.PhaseDeploying, rdy.Message
	case o.facts.Deployed.Number == 1:
		return status.PhaseDeploying, o.health.summary()
	default:
		return status.PhaseUpdating, o.health.summary()
	}
}

func releaseStatus(o *observation) *status.ReleaseStatus {
	rs := &status.ReleaseStatus{Name: o.release.Name}
	rev, d := o.deployed, o.facts.Deployed
	if rev == nil {
		rev, d = o.latest, o.facts.Latest
	}
	if d != nil {
		rs.Revision, rs.Status = d.Number, d.Status
		rs.ValuesDigest, rs.ChartDigest = d.Labels[storage.LabelValuesDigest], d.Labels[storage.LabelChartDigest]
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
