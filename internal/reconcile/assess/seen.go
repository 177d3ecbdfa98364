package assess

import (
	"hash/maphash"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/reconcile/status"
)

// Seen is what Assess last found of one object of a deployed revision,
// so that a live object that has not changed since is not converted,
// compared and assessed again. Under pod churn, each reconcile of a release
// reads its Service unchanged and a Deployment of which only the status
// changed: converting them from their Go types was the largest cost of such a
// reconcile in a CPU profile.
//
// A revision's seen objects are kept with its decoded objects, one per object
// in manifest order, and only the reconciles of its release use them: a
// controller never runs two reconciles of one resource at once.
type Seen struct {
	uid     types.UID
	version string              // the resourceVersion status is of
	status  status.ObjectStatus // of the live object at version

	compared   bool      // drift holds what a comparison at comparedAt found
	comparedAt syncPoint // set with compared
	drift      []string  // the fields of rudder's that differed then
}

// syncPoint names the state of a live object that a comparison with the
// revision holds for. It is the generation and a digest of the revision's
// labels and annotations as the object holds them, and of its owner
// references and finalizers, for the kinds whose generation the API server
// bumps at every change of their spec (their status changes under pod churn;
// the rest of their metadata, and the labels and annotations other managers
// set, such as a Deployment's revision, change nothing rudder applies); the
// resourceVersion for every other kind.
type syncPoint struct {
	generation int64
	meta       uint64
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

// pointOf returns the sync point of live, whose revision's object is want:
// at its resourceVersion when want's metadata sets fields other than labels,
// annotations, owner references and finalizers, which the generation and
// the digest would not follow.
func pointOf(want *unstructured.Unstructured, live client.Object, gk schema.GroupKind) syncPoint {
	if !specGenerations[gk] || live.GetGeneration() == 0 {
		return syncPoint{version: live.GetResourceVersion()}
	}
	meta, _ := want.Object["metadata"].(map[string]any)
	for k := range meta {
		switch k {
		case "name", "namespace", "labels", "annotations", "ownerReferences", "finalizers":
		default:
			return syncPoint{version: live.GetResourceVersion()}
		}
	}
	return syncPoint{generation: live.GetGeneration(), meta: metaDigest(meta, live)}
}

// metaSeed seeds the digests of metadata, which live only in memory.
var metaSeed = maphash.MakeSeed()

// metaDigest digests the values live holds for the labels and annotations
// that want, the revision's metadata, sets, and live's owner references and
// finalizers. Map entries are summed, so that their order does not count.
func metaDigest(want map[string]any, live metav1.Object) uint64 {
	var h maphash.Hash
	h.SetSeed(metaSeed)
	entry := func(parts ...string) uint64 {
		h.Reset()
		for _, p := range parts {
			h.WriteString(p)
			h.WriteByte(0)
		}
		return h.Sum64()
	}
	held := func(prefix string, keys any, values map[string]string) uint64 {
		var sum uint64
		m, _ := keys.(map[string]any)
		for k := range m {
			v, ok := values[k]
			sum += entry(prefix, k, v, strconv.FormatBool(ok))
		}
		return sum
	}
	sum := held("l", want["labels"], live.GetLabels()) + held("a", want["annotations"], live.GetAnnotations())
	for i, ref := range live.GetOwnerReferences() {
		sum += entry("o", strconv.Itoa(i), ref.APIVersion, ref.Kind, ref.Name, string(ref.UID),
			strconv.FormatBool(ptr.Deref(ref.Controller, false)), strconv.FormatBool(ptr.Deref(ref.BlockOwnerDeletion, false)))
	}
	for i, f := range live.GetFinalizers() {
		sum += entry("f", strconv.Itoa(i), f)
	}
	return sum
}

// AppliedAs is what is seen of want's object right after rudder's own
// server-side apply of want, whose answer is live: compared, with nothing
// differing. A drift comparison is a dry run of the same apply, so it would
// find nothing until the object changes past that point.
func AppliedAs(want *unstructured.Unstructured, live client.Object) Seen {
	s := Seen{uid: live.GetUID()}
	s.recordDrift(live, pointOf(want, live, want.GroupVersionKind().GroupKind()), nil)
	return s
}

// driftAt returns the fields the last comparison of this object with the
// revision found differing, if that comparison holds for live at point at.
func (s *Seen) driftAt(live client.Object, at syncPoint) ([]string, bool) {
	if !s.compared || s.uid != live.GetUID() || s.comparedAt != at {
		return nil, false
	}
	return s.drift, true
}

// statusFor returns the status of live, computed again only when live
// changed since it was last computed.
func (s *Seen) statusFor(live client.Object, gvk schema.GroupVersionKind) (status.ObjectStatus, error) {
	if s.uid == live.GetUID() && s.version == live.GetResourceVersion() {
		return s.status, nil
	}
	view, err := statusView(live, gvk)
	if err != nil {
		return status.ObjectStatus{}, err
	}
	s.record(live, status.OfObject(view))
	return s.status, nil
}

// record keeps status as that of live; a comparison made at another state of
// another object no longer holds.
func (s *Seen) record(live client.Object, status status.ObjectStatus) {
	s.forObject(live)
	s.version, s.status = live.GetResourceVersion(), status
}

// recordDrift keeps the fields a comparison of live at point at found
// differing from the revision.
func (s *Seen) recordDrift(live client.Object, at syncPoint, fields []string) {
	s.forObject(live)
	s.compared, s.comparedAt, s.drift = true, at, fields
}

// forObject forgets what was seen of an earlier object of live's name.
func (s *Seen) forObject(live client.Object) {
	if s.uid != live.GetUID() {
		*s = Seen{uid: live.GetUID()}
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
