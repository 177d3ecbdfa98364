package owner

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LabelRelease names the Helm release an object was rendered for. The
// post-renderer stamps it on every object, so that the dependents cache holds
// the objects of rudder's releases and nothing else of the cluster.
const LabelRelease = "rudder.dev/release"

// NewCache returns the cache of the releases' objects: only objects labeled
// LabelRelease, and of each only what rudder reads (trim): without its
// managed fields and last-applied annotation; a ConfigMap or Secret without
// its data, which Whole compares by digest; an object not owned by a resource
// of one of kinds as its metadata alone. Whatever any namespace labels
// LabelRelease, the cache holds no more of it than its metadata. Each object
// is held as the type its informer was asked for. Add it to the manager so
// that it starts with it.
func NewCache(cfg *rest.Config, opts cache.Options, kinds []schema.GroupKind) (cache.Cache, error) {
	req, err := labels.NewRequirement(LabelRelease, selection.Exists, nil)
	if err != nil {
		return nil, fmt.Errorf("selecting the releases' objects: %w", err)
	}
	opts.DefaultLabelSelector = labels.NewSelector().Add(*req)
	owned := ownedBy(kinds)
	opts.DefaultTransform = func(in any) (any, error) {
		if obj, ok := in.(client.Object); ok {
			obj.SetManagedFields(nil)
			return trim(obj, owned), nil
		}
		return in, nil
	}
	c, err := cache.New(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("creating the cache of the releases' objects: %w", err)
	}
	return c, nil
}

// Stamp labels obj as an object of release.
func Stamp(obj interface {
	GetLabels() map[string]string
	SetLabels(map[string]string)
}, release string) {
	l := obj.GetLabels()
	if l[LabelRelease] == release {
		return
	}
	if l == nil {
		l = map[string]string{}
	}
	l[LabelRelease] = release
	obj.SetLabels(l)
}

// NewObject returns an empty object of kind gvk: its Go type when the
// scheme has one, else an unstructured object. Reads and watches of a
// release's objects use it, so that both share one informer per kind.
func NewObject(scheme *runtime.Scheme, gvk schema.GroupVersionKind) client.Object {
	if typed, err := scheme.New(gvk); err == nil {
		if obj, ok := typed.(client.Object); ok {
			return obj
		}
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}
