package hook

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// AnnotationPaused set to "true" on a custom resource pauses it: rudder runs
// none of its hooks and touches none of its objects until it is removed.
const AnnotationPaused = "rudder.dev/paused"

// Pauser is implemented by a hook whose status should say that its resource
// is paused (a schedule that stops acting), since a paused resource's hooks
// do not run. rudder calls Paused instead of Reconcile then, and writes the
// Status and Condition it returns; its Values and RequeueAfter are ignored.
type Pauser interface {
	// Paused returns the hook's status and condition for obj while it is
	// paused, computed from obj alone: it must not read or write the cluster.
	Paused(obj *unstructured.Unstructured) Result
}
