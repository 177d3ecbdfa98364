package owner

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/compact"
)

// LabelRelease names the Helm release an object was rendered for. The
// post-renderer stamps it on every object, so that the dependents cache holds
// the objects of rudder's releases and nothing else of the cluster.
const LabelRelease = "rudder.dev/release"

// NewCache returns the cache of the releases' objects: only objects labeled
// LabelRelease, each kept compact.Encoded with summarize's Summary, and of
// each only what rudder reads (trim): without its managed fields and
// last-applied annotation; a ConfigMap or Secret without its data, which
// Whole compares by digest; an object not owned by a resource of one of
// kinds as its metadata alone. Whatever any namespace labels LabelRelease,
// the cache holds no more of it than its metadata. Add it to the manager so
// that it starts with it.
func NewCache(cfg *rest.Config, opts cache.Options, kinds []schema.GroupKind, summarize func(client.Object) any) (cache.Cache, error) {
	req, err := labels.NewRequirement(LabelRelease, selection.Exists, nil)
	if err != nil {
		return nil, fmt.Errorf("selecting the releases' objects: %w", err)
	}
	opts.DefaultLabelSelector = labels.NewSelector().Add(*req)
	encode := compact.TransformEncoding(compact.Encodable, summarize)
	owned := ownedBy(kinds)
	opts.DefaultTransform = func(in any) (any, error) {
		// An informer may transform an object twice: what it already
		// encoded is left as it is.
		if _, done := in.(*compact.Encoded); done {
			return in, nil
		}
		if obj, ok := in.(client.Object); ok {
			in = trim(obj, owned)
		}
		return encode(in)
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

// Look returns the object of obj's kind at key as c holds it, without a
// copy: a *compact.Encoded, its metadata read as it is and the rest decoded
// on demand. Not to be changed. An object the cache does not hold is read as
// a Get reads it (a NotFound error when it is not there).
func Look(ctx context.Context, c cache.Cache, obj client.Object, key client.ObjectKey) (client.Object, error) {
	inf, err := c.GetInformer(ctx, obj)
	if err != nil {
		return nil, err
	}
	if idx, ok := inf.(toolscache.SharedIndexInformer); ok {
		storeKey := key.Name
		if key.Namespace != "" {
			storeKey = key.Namespace + "/" + key.Name
		}
		item, exists, err := idx.GetIndexer().GetByKey(storeKey)
		if err != nil {
			return nil, err
		}
		if held, ok := item.(client.Object); exists && ok {
			return held, nil
		}
	}
	if err := c.Get(ctx, key, obj); err != nil {
		return nil, err
	}
	return obj, nil
}
