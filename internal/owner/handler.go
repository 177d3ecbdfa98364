package owner

import (
	"context"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	name, _, _ = strings.Cut(name, "/") // the UID, when the value names one
	if !ok || name == "" {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: ns, Name: name}, true
}

// Owns reports whether obj was made for res, the custom resource of kind gk,
// in this life of its name: it carries an owner reference to res's UID, or
// the Annotation naming that UID. A name alone does not do: an object made
// for an earlier resource of the same name is not res's, nor is an object a
// tenant named after res. An object rudder marked before the Annotation named
// a UID is res's when it names res and was created no earlier than res: an
// earlier resource's object is older than res.
func Owns(obj, res metav1.Object, gk schema.GroupKind) bool {
	uid := res.GetUID()
	if uid == "" {
		return false
	}
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == uid {
			return true
		}
	}
	switch obj.GetAnnotations()[Annotation] {
	case AnnotationValue(res, gk):
		return true
	case legacyValue(res, gk):
		return !obj.GetCreationTimestamp().Time.Before(res.GetCreationTimestamp().Time)
	}
	return false
}
