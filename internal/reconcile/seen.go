package reconcile

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// seenObject is what assess last found of one object of a deployed revision,
// so that a live object that has not changed since is not converted,
// compared and assessed again. Under pod churn, each reconcile of a release
// reads its Service unchanged and a Deployment of which only the status
// changed: converting them from their Go types was the largest cost of such a
// reconcile in a CPU profile.
//
// A revision's seen objects are kept with its decoded objects, one per object
// in manifest order, and only the reconciles of its release use them: a
// controller never runs two reconciles of one resource at once.
type seenObject struct {
	uid     types.UID
	version string       // the resourceVersion status is of
	status  objectStatus // of the live object at version

	synced   bool      // the live object matched the revision at syncedAt
	syncedAt syncPoint // set with synced
}

// syncPoint names the state of a live object that a comparison with the
// revision holds for. It is the generation for the kinds whose generation the
// API server bumps at every change of their spec (their status changes, and
// their labels and annotations are compared apart); the resourceVersion for
// every other kind.
type syncPoint struct {
	generation int64
	version    string
}

// specGenerations are the kinds whose generation changes with their spec.
var specGenerations = map[schema.GroupKind]bool{
	{Group: "apps", Kind: "Deployment"}:  true,
	{Group: "apps", Kind: "StatefulSet"}: true,
	{Group: "apps", Kind: "DaemonSet"}:   true,
	{Group: "apps", Kind: "ReplicaSet"}:  true,
	{Group: "batch", Kind: "Job"}:        true,
	{Group: "batch", Kind: "CronJob"}:    true,
}

// pointOf returns the sync point of live, and whether a comparison at that
// point still holds for live's metadata too: false when want's metadata sets
// fields other than labels, annotations, owner references and finalizers, or
// when those differ now.
func pointOf(want *unstructured.Unstructured, live client.Object, gk schema.GroupKind, ignores bool) (syncPoint, bool) {
	if !specGenerations[gk] || ignores || live.GetGeneration() == 0 {
		return syncPoint{version: live.GetResourceVersion()}, true
	}
	meta, _ := want.Object["metadata"].(map[string]any)
	for k, v := range meta {
		var got any
		switch k {
		case "name", "namespace": // the key it was read by
			continue
		case "labels":
			got = stringMap(live.GetLabels())
		case "annotations":
			got = stringMap(live.GetAnnotations())
		case "ownerReferences":
			got = ownerReferences(live.GetOwnerReferences())
		case "finalizers":
			got = stringList(live.GetFinalizers())
		default:
			return syncPoint{}, false
		}
		if !contains(got, v) {
			return syncPoint{}, false
		}
	}
	return syncPoint{generation: live.GetGeneration()}, true
}

// stringMap, stringList and ownerReferences return metadata as an
// unstructured object holds it, for contains.
func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func stringList(l []string) []any {
	out := make([]any, len(l))
	for i, v := range l {
		out[i] = v
	}
	return out
}

func ownerReferences(refs []metav1.OwnerReference) []any {
	out := make([]any, len(refs))
	for i, r := range refs {
		m := map[string]any{"apiVersion": r.APIVersion, "kind": r.Kind, "name": r.Name, "uid": string(r.UID)}
		if r.Controller != nil {
			m["controller"] = *r.Controller
		}
		if r.BlockOwnerDeletion != nil {
			m["blockOwnerDeletion"] = *r.BlockOwnerDeletion
		}
		out[i] = m
	}
	return out
}

// inSync reports whether the last comparison of this object with the
// revision found no difference and still holds for live.
func (s *seenObject) inSync(live client.Object, at syncPoint) bool {
	return s.synced && s.uid == live.GetUID() && s.syncedAt == at
}

// statusFor returns the status of live, computed again only when live
// changed since it was last computed.
func (s *seenObject) statusFor(live client.Object, gvk schema.GroupVersionKind) (objectStatus, error) {
	if s.uid == live.GetUID() && s.version == live.GetResourceVersion() {
		return s.status, nil
	}
	view, err := statusView(live, gvk)
	if err != nil {
		return objectStatus{}, err
	}
	s.record(live, statusOf(view))
	return s.status, nil
}

// record keeps status as that of live; a comparison made at another state of
// another object no longer holds.
func (s *seenObject) record(live client.Object, status objectStatus) {
	s.forObject(live)
	s.version, s.status = live.GetResourceVersion(), status
}

// recordSync keeps whether live matched the revision at point at.
func (s *seenObject) recordSync(live client.Object, at syncPoint, synced bool) {
	s.forObject(live)
	s.synced, s.syncedAt = synced, at
}

// forObject forgets what was seen of an earlier object of live's name.
func (s *seenObject) forObject(live client.Object) {
	if s.uid != live.GetUID() {
		*s = seenObject{uid: live.GetUID()}
	}
}

// statusView returns live as an unstructured object for kstatus, which reads
// its metadata, spec and status: a workload's pod template, the bulk of it, is
// left out. live is read from the cache without a copy and is not changed.
func statusView(live client.Object, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	var obj runtime.Object = live
	switch o := live.(type) {
	case *unstructured.Unstructured:
		return o, nil
	case *appsv1.Deployment:
		c := *o
		c.Spec.Template = corev1.PodTemplateSpec{}
		obj = &c
	case *appsv1.StatefulSet:
		c := *o
		c.Spec.Template, c.Spec.VolumeClaimTemplates = corev1.PodTemplateSpec{}, nil
		obj = &c
	case *appsv1.DaemonSet:
		c := *o
		c.Spec.Template = corev1.PodTemplateSpec{}
		obj = &c
	case *appsv1.ReplicaSet:
		c := *o
		c.Spec.Template = corev1.PodTemplateSpec{}
		obj = &c
	case *batchv1.Job:
		c := *o
		c.Spec.Template = corev1.PodTemplateSpec{}
		obj = &c
	}
	return toUnstructured(obj, gvk)
}

// toUnstructured returns a copy of obj as an unstructured object of kind gvk.
func toUnstructured(obj runtime.Object, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.DeepCopy(), nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk) // typed objects read from a cache carry no kind
	return u, nil
}
