package reconcile

import (
	"context"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// releaseHandler enqueues the custom resource whose release a storage Secret
// belongs to (Helm's label name), so that every new or changed revision —
// rudder's, or one written with the helm CLI — is looked at right away.
func (r *Reconciler) releaseHandler() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		keys := r.ownersOf(ctx, obj.GetNamespace(), obj.GetLabels()["name"])
		reqs := make([]reconcile.Request, len(keys))
		for i, k := range keys {
			reqs[i] = reconcile.Request{NamespacedName: k}
		}
		return reqs
	})
}

// hashedName matches the end of a release name Watch.ReleaseName cut to fit.
var hashedName = regexp.MustCompile(`-[0-9a-f]{8}$`)

// ownersOf returns the custom resources of this kind in namespace ns whose
// release may be named release: "<kind>-<name>" read back, and for a name
// that may have been cut and hashed, the resources whose release it is.
func (r *Reconciler) ownersOf(ctx context.Context, ns, release string) []types.NamespacedName {
	name, ok := strings.CutPrefix(release, strings.ToLower(r.Watch.GVK.Kind)+"-")
	if !ok || name == "" {
		return nil
	}
	var keys []types.NamespacedName
	if r.Watch.ReleaseName(name) == release {
		keys = append(keys, types.NamespacedName{Namespace: ns, Name: name})
	}
	if !hashedName.MatchString(release) {
		return keys
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(r.Watch.GVK.GroupVersion().WithKind(r.Watch.GVK.Kind + "List"))
	if err := r.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		return keys
	}
	for _, item := range list.Items {
		if item.GetName() != name && r.Watch.ReleaseName(item.GetName()) == release {
			keys = append(keys, types.NamespacedName{Namespace: ns, Name: item.GetName()})
		}
	}
	return keys
}
