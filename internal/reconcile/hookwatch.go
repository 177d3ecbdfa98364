package reconcile

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/rudder-operator/rudder/internal/hook"
)

// watchHooks adds to b a watch, through c, of every kind a hook of the kind
// names (hook.Watcher): a change of such an object reconciles the resources
// it concerns.
func (r *Reconciler) watchHooks(c cache.Cache, b *builder.TypedBuilder[ctrl.Request]) {
	for _, h := range r.Hooks {
		w, ok := h.(hook.Watcher)
		if !ok {
			continue
		}
		for _, hw := range w.Watches() {
			b.WatchesRawSource(source.Kind[client.Object](c, hw.Object.DeepCopy(),
				handler.EnqueueRequestsFromMapFunc(r.concerned(hw))))
		}
	}
}

// concerned maps a watched object to the resources of the kind, in its
// namespace (all namespaces for a cluster-scoped one), that hw says it
// concerns, read from the manager's cache. It runs on every event of the
// watched kind (every pod's), and Concerns only reads: the cache's own
// objects are listed, not deep copies.
func (r *Reconciler) concerned(hw hook.Watch) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []ctrl.Request {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(r.Watch.GVK.GroupVersion().WithKind(r.Watch.GVK.Kind + "List"))
		if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing resources a watched object may concern", "kind", r.Watch.GVK.Kind)
			return nil
		}
		var out []ctrl.Request
		for i := range list.Items {
			if hw.Concerns(&list.Items[i], o) {
				out = append(out, ctrl.Request{NamespacedName: keyOf(&list.Items[i])})
			}
		}
		return out
	}
}
