package owner

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Handler returns an event handler that enqueues the custom resource of kind
// gk owning the object an event is about, found by owner reference or by the
// Annotation.
func Handler(gk schema.GroupKind) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		if key, ok := Of(obj, gk); ok {
			return []reconcile.Request{{NamespacedName: key}}
		}
		return nil
	})
}

// Of returns the custom resource of kind gk that owns obj.
func Of(obj client.Object, gk schema.GroupKind) (types.NamespacedName, bool) {
	for _, ref := range obj.GetOwnerReferences() {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err == nil && ref.Kind == gk.Kind && gv.Group == gk.Group {
			return types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}, true
		}
	}
	v, ok := obj.GetAnnotations()[Annotation]
	if !ok {
		return types.NamespacedName{}, false
	}
	prefix := gk.Kind + "." + gk.Group + "/"
	rest, ok := strings.CutPrefix(v, prefix)
	if !ok {
		return types.NamespacedName{}, false
	}
	ns, name, ok := strings.Cut(rest, "/")
	if !ok || name == "" {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: ns, Name: name}, true
}
