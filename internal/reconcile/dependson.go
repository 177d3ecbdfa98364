package reconcile

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rudder-operator/rudder/internal/depends"
)

// dependsIndex indexes the custom resources of a kind by the resources their
// depends-on annotation names (depends.Ref.Key).
const dependsIndex = "rudder.dev/depends-on"

// dependencyPoll is how often a resource waiting on its dependencies looks
// again, should a dependency's change not reach it (it is watched).
const dependencyPoll = time.Minute

// watchDependencies indexes the kind's resources by their dependencies and
// reconciles the resources that depend on one of rudder's resources when that
// one's readiness changes, so that a resource waiting on a Database starts as
// soon as the Database is Ready.
func (r *Reconciler) watchDependencies(mgr ctrl.Manager, b *builder.Builder) error {
	if len(r.Kinds.GVKs) == 0 {
		return nil
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), r.newObject(), dependsIndex, func(obj client.Object) []string {
		return r.Kinds.Keys(obj)
	}); err != nil {
		return err
	}
	for _, gvk := range r.Kinds.GVKs {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(gvk)
		b.Watches(obj, handler.EnqueueRequestsFromMapFunc(r.dependentsOf(gvk)), builder.WithPredicates(readinessChanged()))
	}
	return nil
}

// dependentsOf maps a resource of kind gvk to this kind's resources that
// depend on it.
func (r *Reconciler) dependentsOf(gvk schema.GroupVersionKind) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		key := depends.Ref{GVK: gvk, NamespacedName: client.ObjectKeyFromObject(obj)}.Key()
		return r.requests(ctx, "depend on "+key, client.MatchingFields{dependsIndex: key})
	}
}

// requests lists this kind's resources with opts, from the cache, as
// requests; why says what they are, for the log when the list fails.
func (r *Reconciler) requests(ctx context.Context, why string, opts ...client.ListOption) []reconcile.Request {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(r.Watch.GVK.GroupVersion().WithKind(r.Watch.GVK.Kind + "List"))
	if err := r.Client.List(ctx, list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the resources that "+why)
		return nil
	}
	reqs := make([]reconcile.Request, len(list.Items))
	for i := range list.Items {
		reqs[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
	}
	return reqs
}

// readinessChanged passes creations, deletions, and updates that change what
// a dependent reads: the Ready condition, the generation or the one acted on,
// the deletion, or the dependency's own depends-on annotation (a cycle).
func readinessChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return dependencyState(e.ObjectOld) != dependencyState(e.ObjectNew) ||
				e.ObjectOld.GetAnnotations()[depends.Annotation] != e.ObjectNew.GetAnnotations()[depends.Annotation]
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// readinessOf is what a dependent reads of a resource, as one comparable value.
type readinessOf struct {
	generation, observed int64
	ready                string
	deleting             bool
}

func dependencyState(obj client.Object) readinessOf {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return dependencyReadiness(u)
	}
	return readinessOf{}
}

// dependencyReadiness is what a dependent reads of u.
func dependencyReadiness(u *unstructured.Unstructured) readinessOf {
	out := readinessOf{generation: u.GetGeneration(), deleting: !u.GetDeletionTimestamp().IsZero()}
	out.observed, _, _ = unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	if c := depends.Ready(u); c != nil {
		out.ready, _ = c["status"].(string)
	}
	return out
}

// dependsOn runs the step of a resource whose dependencies hold back its
// install or upgrade: status says what it waits for, and a dependency's
// change (watched) or dependencyPoll brings it back.
func (r *Reconciler) dependsOn(o *observation) (ctrl.Result, error) {
	if e, ok := depends.IsError(o.Facts.DependsErr); ok && e.Reason != depends.ReasonNotReady {
		return ctrl.Result{}, nil // only a change of an annotation helps
	}
	return ctrl.Result{RequeueAfter: dependencyPoll}, nil
}
