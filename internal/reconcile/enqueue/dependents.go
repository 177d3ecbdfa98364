package enqueue

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/rudder-operator/rudder/internal/owner"
)

// Dependents starts, once per kind, a watch on the kinds of objects the
// releases render, so that an object changed or deleted by hand, or one whose
// readiness changes, enqueues its custom resource (settlingHandler).
type Dependents struct {
	Controller controller.Controller
	Cache      cache.Cache // the dependents cache (owner.NewCache)
	Scheme     *runtime.Scheme
	Owner      schema.GroupKind // the kind of the custom resources
	// Enabled is the watch's watchDependentResources: false watches none.
	Enabled bool

	mu      sync.Mutex
	watched map[schema.GroupVersionKind]bool
}

// Watch watches the kinds of objs not watched yet.
func (w *Dependents) Watch(objs []*unstructured.Unstructured) error {
	if !w.Enabled {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watched == nil {
		w.watched = map[schema.GroupVersionKind]bool{}
	}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if w.watched[gvk] {
			continue
		}
		obj := owner.NewObject(w.Scheme, gvk) // the type live reads, so both share one informer
		if err := w.Controller.Watch(source.Kind[client.Object](w.Cache, obj, newSettlingHandler(w.Owner, gvk))); err != nil {
			return err
		}
		w.watched[gvk] = true
	}
	return nil
}

// Resources passes the custom-resource events worth a reconcile: those of
// resources the watch's selector matches or that carry rudder's finalizer
// (they have a release, selected or not), and of changes to their spec,
// labels, annotations or deletion — not the status writes of rudder itself.
func Resources(sel labels.Selector, finalizer string) predicate.Predicate {
	return predicate.And(
		predicate.NewPredicateFuncs(func(o client.Object) bool {
			return sel.Matches(labels.Set(o.GetLabels())) || controllerutil.ContainsFinalizer(o, finalizer)
		}),
		predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{}),
	)
}
