package hook

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Watcher is implemented by a hook that must run when objects it did not
// create change (the pods a resource selects), not only when its resource or
// its release does: rudder watches the kinds it names and reconciles the
// resources a change concerns at once, instead of at the hook's next
// RequeueAfter.
//
// rudder caches only the metadata of watched objects (a metadata informer,
// managed fields dropped), shared by every kind that watches the same kind,
// so that watching pods does not hold every pod of the cluster in full. A
// metadata watch still sees every change of an object, its status too. The
// hook reads what it decides on (a pod's readiness) when it runs.
type Watcher interface {
	// Watches returns what to watch; each entry names one kind.
	Watches() []Watch
}

// Watch is one kind a Watcher watches.
type Watch struct {
	// Object is the kind to watch: its TypeMeta (apiVersion and kind) set.
	Object *metav1.PartialObjectMetadata
	// Concerns reports whether a change of o (its metadata, before or after
	// the change) concerns resource, one of the resources of a kind enabling
	// the hook, in o's namespace, or in every namespace rudder watches when o
	// is cluster-scoped. It must not call the API server, nor change
	// resource (the cache's own object): it runs for every change of every
	// watched object.
	Concerns func(resource *unstructured.Unstructured, o metav1.Object) bool
}
