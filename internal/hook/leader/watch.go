package leader

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/rudder-operator/rudder/internal/hook"
)

var _ hook.Watcher = (*Hook)(nil)

// Watches implements hook.Watcher: a change of a pod a resource selects (or
// leads with) and of the node its leader runs on reconciles the resource at
// once, so that the lead moves within a reconcile of the leader's deletion,
// loss of readiness or loss of its node.
func (*Hook) Watches() []hook.Watch {
	pod := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}}
	node := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}}
	return []hook.Watch{
		{Object: pod, Concerns: selects},
		{Object: node, Concerns: func(res *unstructured.Unstructured, o metav1.Object) bool {
			n, _, _ := unstructured.NestedString(res.Object, "status", "leaderNode")
			return n != "" && n == o.GetName()
		}},
	}
}

// selects reports whether res selects pod o or o leads for it.
func selects(res *unstructured.Unstructured, o metav1.Object) bool {
	if l, _, _ := unstructured.NestedString(res.Object, "status", "leader"); l != "" && l == o.GetName() {
		return true
	}
	// The cache's own object (hook.Watch): read in place, not copied, on
	// every pod event.
	raw, _, _ := unstructured.NestedFieldNoCopy(res.Object, "spec")
	spec, _ := raw.(map[string]any)
	sel, err := selectorOf(spec)
	return err == nil && sel.Matches(labels.Set(o.GetLabels()))
}
