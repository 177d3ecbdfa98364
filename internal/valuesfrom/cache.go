package valuesfrom

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NewCache returns a cache of the identity of ConfigMaps and Secrets (name,
// namespace, uid, resourceVersion: nothing of their content), through which
// a change of a source reconciles the resources that read it. Helm's storage
// Secrets (owner=helm) are left out. Its informers start on first use.
func NewCache(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
	notHelm, err := labels.NewRequirement("owner", selection.NotEquals, []string{"helm"})
	if err != nil {
		return nil, err
	}
	opts.ByObject = map[client.Object]cache.ByObject{
		Object("Secret"): {Label: labels.NewSelector().Add(*notHelm)},
	}
	opts.DefaultTransform = func(obj any) (any, error) {
		m, ok := obj.(*metav1.PartialObjectMetadata)
		if !ok {
			return obj, nil
		}
		return &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
			Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion}}, nil
	}
	c, err := cache.New(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("creating the cache of values sources: %w", err)
	}
	return c, nil
}

// Object returns the metadata-only object of kind (ConfigMap or Secret) that
// the cache of NewCache holds.
func Object(kind string) client.Object {
	o := &metav1.PartialObjectMetadata{}
	o.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
	return o
}

// Kinds are the kinds of object a source reads.
var Kinds = []string{"ConfigMap", "Secret"}
