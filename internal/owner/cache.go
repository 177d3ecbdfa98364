package owner

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/rudder-operator/rudder/internal/compact"
)

// LabelRelease names the Helm release an object was rendered for. The
// post-renderer stamps it on every object, so that the dependents cache holds
// the objects of rudder's releases and nothing else of the cluster.
const LabelRelease = "rudder.dev/release"

// NewCache returns the cache of the releases' objects: only objects labeled
// LabelRelease, without their managed fields. Add it to the manager so that
// it starts with it.
func NewCache(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
	req, err := labels.NewRequirement(LabelRelease, selection.Exists, nil)
	if err != nil {
		return nil, fmt.Errorf("selecting the releases' objects: %w", err)
	}
	opts.DefaultLabelSelector = labels.NewSelector().Add(*req)
	opts.DefaultTransform = compact.Transform()
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
