package reconcile

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rudder-operator/rudder/internal/identity"
)

// watchNamespaces reconciles the resources of a namespace when the accounts
// its Namespace allows them to name change (identity.NamespaceAnnotation):
// one refused until then may go on, or one allowed until then must stop.
func (r *Reconciler) watchNamespaces(b *builder.Builder) {
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	changed := predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			if r.Namespaces != nil && !slices.Contains(r.Namespaces, e.ObjectNew.GetName()) {
				return false // none of its resources is served
			}
			return !slices.Equal(identity.AllowedBy(e.ObjectOld.GetAnnotations()), identity.AllowedBy(e.ObjectNew.GetAnnotations()))
		},
	}
	b.WatchesMetadata(ns, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		return r.requests(ctx, "name the accounts of namespace "+obj.GetName(), client.InNamespace(obj.GetName()))
	}), builder.WithPredicates(changed))
}
