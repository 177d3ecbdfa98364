package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// repair puts back want when live is missing or differs from it in a field
// want sets, and returns the object as it now is. Fields want does not set
// (defaults, status, what other controllers add) are not drift.
func (r *Reconciler) repair(ctx context.Context, o *observation, want, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ref := want.GetKind() + "/" + want.GetName()
	writer, err := r.actingClient(o)
	if err != nil {
		return nil, err
	}
	if live == nil {
		obj := want.DeepCopy()
		err := writer.Create(ctx, obj)
		if err == nil {
			r.repaired(ctx, o, want, "deleted")
			return obj, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, r.repairFailed(o, ref, err)
		}
		// The cache was behind, or the object lacks the label the cache
		// selects on (an older rudder wrote it): read it from the API server.
		if live, err = r.read(ctx, r.APIReader, want); live == nil || err != nil {
			return live, err
		}
	}
	if want = ignoring(r.Watch.Drift, want, live); !drifted(want, live) {
		return live, nil
	}
	patch, err := json.Marshal(withoutStatus(want.Object))
	if err != nil {
		return nil, err
	}
	before := live.GetResourceVersion()
	if err := writer.Patch(ctx, live, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return nil, r.repairFailed(o, ref, err)
	}
	if live.GetResourceVersion() != before {
		r.repaired(ctx, o, want, "changed")
	}
	return live, nil
}

// drifts reports whether live exists and differs from want in a field want
// sets that the kind's drift rules do not ignore.
func (r *Reconciler) drifts(want, live *unstructured.Unstructured) bool {
	return live != nil && drifted(ignoring(r.Watch.Drift, want, live), live)
}

// confirmed returns live, read again from the API server when the cache shows
// it missing or drifted: the cache may not have seen the revision's own writes
// yet, and a report of drift must not name those.
func (r *Reconciler) confirmed(ctx context.Context, want, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if live != nil && !r.drifts(want, live) {
		return live, nil
	}
	return r.read(ctx, r.APIReader, want)
}

// reportDrift records, in warn mode, an event when the objects that differ
// from the deployed revision are not those the Drifted condition already
// names. The condition itself is written with the status.
func (r *Reconciler) reportDrift(o *observation) {
	if o.drift == nil || len(*o.drift) == 0 {
		return
	}
	msg := driftMessage(o)
	if prev := conditionOf(o.obj, ConditionDrifted); prev != nil && prev.Status == metav1.ConditionTrue && prev.Message == msg {
		return
	}
	r.Recorder.Eventf(o.obj, nil, corev1.EventTypeWarning, ReasonDriftDetected, "Compare", "%s", msg)
}

// driftCondition is the Drifted condition of o: nil when drift was not
// looked at in warn mode this reconcile (the condition then stays as it is).
func driftCondition(o *observation) *metav1.Condition {
	if o.drift == nil {
		return nil
	}
	if len(*o.drift) == 0 {
		return &metav1.Condition{Type: ConditionDrifted, Status: metav1.ConditionFalse, Reason: ReasonNoDrift,
			Message: fmt.Sprintf("Every object matches revision %d", o.deployed.Revision)}
	}
	if !o.deployed.Signed {
		return &metav1.Condition{Type: ConditionDrifted, Status: metav1.ConditionTrue, Reason: ReasonRevisionNotSigned, Message: driftMessage(o)}
	}
	return &metav1.Condition{Type: ConditionDrifted, Status: metav1.ConditionTrue, Reason: ReasonDrifted, Message: driftMessage(o)}
}

func driftMessage(o *observation) string {
	if !o.deployed.Signed {
		return fmt.Sprintf("%s differ from revision %d outside Helm; rudder did not write that revision, so it does not apply its manifest: "+
			"change the spec to have rudder upgrade the release, or undo the edit", strings.Join(*o.drift, ", "), o.deployed.Revision)
	}
	return fmt.Sprintf("%s differ from revision %d outside Helm; driftDetection.mode is warn, so rudder leaves them: "+
		"undo the edit, or upgrade the release to make it part of the chart", strings.Join(*o.drift, ", "), o.deployed.Revision)
}

// repaired records that obj was put back. The object is the event's related
// object, so that events about two objects are not merged into one series.
func (r *Reconciler) repaired(ctx context.Context, o *observation, obj *unstructured.Unstructured, how string) {
	ref := obj.GetKind() + "/" + obj.GetName()
	ctrl.LoggerFrom(ctx).Info("Put back object "+how+" outside Helm", "object", ref)
	driftRepairs.WithLabelValues(r.Watch.GVK.Kind, obj.GetKind()).Inc()
	r.Recorder.Eventf(o.obj, obj, corev1.EventTypeNormal, ReasonDriftRepaired, "Repair",
		"Put back %s, %s outside its release", ref, how)
}

func (r *Reconciler) repairFailed(o *observation, ref string, err error) error {
	if namespaceTerminating(err) {
		return err // no event: the namespace's deletion reaches the resource next
	}
	r.Recorder.Eventf(o.obj, nil, corev1.EventTypeWarning, ReasonDriftRepairFail, "Repair", "Cannot put back %s: %s", ref, err.Error())
	return fmt.Errorf("putting back %s: %w", ref, err)
}

// drifted reports whether live differs from want in a field want sets.
func drifted(want, live *unstructured.Unstructured) bool {
	return !contains(live.Object, withoutStatus(want.Object))
}

func withoutStatus(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "status" {
			out[k] = v
		}
	}
	return out
}

// contains reports whether got holds every field of want with an equal value.
// Lists must have want's length, element by element. Numbers compare by value
// and quantity strings by quantity ("0.5" holds "500m"). An empty or null
// value in want is held by a missing one: the API server drops them.
func contains(got, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return got == nil && len(w) == 0
		}
		for k, wv := range w {
			gv, present := g[k]
			if !present {
				if isEmpty(wv) {
					continue
				}
				return false
			}
			if !contains(gv, wv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok {
			return got == nil && len(w) == 0
		}
		if len(g) != len(w) {
			return false
		}
		for i := range w {
			if !contains(g[i], w[i]) {
				return false
			}
		}
		return true
	case nil:
		return true
	case string:
		g, ok := got.(string)
		return ok && (g == w || sameQuantity(g, w))
	default:
		if wf, ok := number(want); ok {
			gf, ok := number(got)
			return ok && gf == wf
		}
		return got == want
	}
}

func isEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func sameQuantity(a, b string) bool {
	qa, err := resource.ParseQuantity(a)
	if err != nil {
		return false
	}
	qb, err := resource.ParseQuantity(b)
	return err == nil && qa.Cmp(qb) == 0
}
