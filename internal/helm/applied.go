package helm

import (
	"sync"

	"helm.sh/helm/v4/pkg/kube"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// applied records what the API server answered to each server-side apply of
// an action: the object as it stood right after the apply. A drift
// comparison of that object with the revision would find nothing, so it need
// not be asked (Release.Applied).
type applied struct {
	mu   sync.Mutex
	objs []metav1.PartialObjectMetadata
}

// add records the objects of rl that Helm refreshed from an apply's answer.
// Helm refreshes an object it applied; one it did not still has no UID.
func (a *applied) add(rl kube.ResourceList) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, info := range rl {
		if info.Object == nil || info.Mapping == nil {
			continue
		}
		m, err := meta.Accessor(info.Object)
		if err != nil || m.GetUID() == "" || m.GetResourceVersion() == "" {
			continue
		}
		p := metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(), ResourceVersion: m.GetResourceVersion(),
			Generation: m.GetGeneration(), Labels: m.GetLabels(), Annotations: m.GetAnnotations(),
			OwnerReferences: m.GetOwnerReferences(), Finalizers: m.GetFinalizers(),
		}}
		p.APIVersion, p.Kind = info.Mapping.GroupVersionKind.ToAPIVersionAndKind()
		a.objs = append(a.objs, p)
	}
}

// take returns what was recorded and forgets it.
func (a *applied) take() []metav1.PartialObjectMetadata {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.objs
	a.objs = nil
	return out
}
