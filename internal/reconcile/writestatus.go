package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/reconcile/status"
)

// writeStatus computes status from o and patches it onto the custom resource,
// unless nothing changed. When only a rollout's progress changed and the last
// write was less than progressInterval ago, it writes nothing and returns how
// long to wait before the reconcile that writes it.
func (r *Reconciler) writeStatus(ctx context.Context, o *observation) (time.Duration, error) {
	current, _ := o.Resource.Object["status"].(map[string]any)
	var prev status.Status
	if current != nil {
		_ = runtime.DefaultUnstructuredConverter.FromUnstructured(current, &prev)
	}
	st := status.Compute(&o.Observation, prev, r.now())
	st.History = r.history(ctx, o)
	st.LastHandledReconcileAt = o.Resource.GetAnnotations()[status.AnnotationReconcileRequestedAt]
	st.ActingAs = o.actor.String()
	if fl, ok := r.memory.lastFailure(o.key); ok && fl.Count > 0 && fl.Want == o.Facts.Want {
		st.Failures = fl.Status()
	}
	rs := stateOfStatus(o, &st)
	r.memory.setState(o.key, rs)
	r.memory.setMember(o.key, r.member(o, rs.ready))
	pub := status.Publish(&o.Observation, status.TakenKeys(status.HookStatus(&o.Observation)))
	pub.Into(&st, prev.Published, r.now())
	computed, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&st)
	if err != nil {
		return 0, fmt.Errorf("encoding status: %w", err)
	}
	next := make(map[string]any, len(current)+len(computed))
	for k, v := range current {
		next[k] = v
	}
	for _, k := range status.OwnedKeys {
		delete(next, k)
	}
	pub.Apply(next, prev.Published)
	for k, v := range status.HookStatus(&o.Observation) {
		if slices.Contains(status.OwnedKeys, k) || k == "conditions" {
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
	status.FitConditions(next)
	// The cache may not show our last write yet: skipping is safe only when
	// it shows exactly what we last wrote (or nothing was written since start).
	if equality.Semantic.DeepEqual(current, next) && r.memory.shows(o.key, o.Resource.GetResourceVersion()) {
		return 0, nil
	}
	if status.ProgressOnly(current, next) {
		if wait := r.memory.progressWait(o.key, r.now()); wait > 0 {
			return wait, nil
		}
	}
	body, err := json.Marshal(map[string]any{"status": status.MergePatch(current, next)})
	if err != nil {
		return 0, fmt.Errorf("encoding status: %w", err)
	}
	// Only the answer's resourceVersion is read: asked for as metadata, the
	// patched resource is neither encoded whole by the API server nor decoded
	// whole here, on every status write.
	patched := &metav1.PartialObjectMetadata{}
	patched.SetGroupVersionKind(o.Resource.GroupVersionKind())
	patched.SetNamespace(o.Resource.GetNamespace())
	patched.SetName(o.Resource.GetName())
	if err := r.Client.Status().Patch(ctx, patched, client.RawPatch(types.MergePatchType, body)); err != nil {
		return 0, fmt.Errorf("writing status: %w", err)
	}
	r.memory.wrote(o.key, patched.GetResourceVersion(), r.now())
	return 0, nil
}
