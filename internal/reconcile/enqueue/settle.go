package enqueue

import (
	"context"
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rudder-operator/rudder/internal/owner"
)

// settle is how long an update that only an object's status shows, and
// that leaves the object plainly not ready, waits before its custom resource
// is reconciled. Updates within it are reconciled once: a pod replaced within
// it (a node drained, a pod evicted or deleted) costs one reconcile and no
// status write, where reporting the dip would cost two of each, and a rollout
// writes its progress at most every settle, not at every pod. A dip that lasts
// is reported settle late; an update that may make the object ready is
// reconciled at once.
const settle = 2 * time.Second

// settlingHandler enqueues the custom resource of kind owner that owns the
// object an event is about (owner.Handler), at once, except for an update
// that changes only the object's status and leaves it plainly not ready: that
// one waits settle. The queue merges the two, so a recovery within settle
// reconciles once, at once.
type settlingHandler struct {
	handler.EventHandler
	owner schema.GroupKind
	kind  schema.GroupVersionKind // of the objects watched
}

func newSettlingHandler(ownerKind schema.GroupKind, kind schema.GroupVersionKind) settlingHandler {
	return settlingHandler{EventHandler: owner.Handler(ownerKind), owner: ownerKind, kind: kind}
}

// Update implements handler.EventHandler.
func (h settlingHandler) Update(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if !settles(h.kind, e.ObjectOld, e.ObjectNew) {
		h.EventHandler.Update(ctx, e, q)
		return
	}
	for _, obj := range []client.Object{e.ObjectOld, e.ObjectNew} {
		if key, ok := owner.Of(obj, h.owner); ok {
			q.AddAfter(reconcile.Request{NamespacedName: key}, settle)
		}
	}
}

// settles tells whether an update from old to new may wait settle: it
// changed nothing but the object's status, and the object is plainly not
// ready. Everything else, drift above all, is looked at at once. It runs for
// every update of every object of every release, so it compares Go types
// without converting them. Its answer decides only when a reconcile runs, not
// whether: a wrong one costs 2 s at most.
func settles(kind schema.GroupVersionKind, old, new client.Object) bool {
	if old == nil || new == nil || !sameButStatus(old, new) {
		return false
	}
	return !mayBeReady(kind, new)
}

// sameButStatus tells whether a and b, of one type, are equal but for their
// status, their resource version and their managed fields.
func sameButStatus(a, b client.Object) bool {
	if ua, ok := a.(*unstructured.Unstructured); ok {
		ub, ok := b.(*unstructured.Unstructured)
		return ok && sameMapButStatus(ua.Object, ub.Object)
	}
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	if va.Kind() != reflect.Struct || va.Type() != vb.Type() {
		return false
	}
	// The API server counts every change of a workload's spec in its
	// generation; kinds without one (0) have their fields compared.
	counted := a.GetGeneration() > 0 && a.GetGeneration() == b.GetGeneration()
	for i := range va.NumField() {
		switch va.Type().Field(i).Name {
		case "TypeMeta", "Status":
		case "ObjectMeta":
			ma, okA := va.Field(i).Interface().(metav1.ObjectMeta)
			mb, okB := vb.Field(i).Interface().(metav1.ObjectMeta)
			if !okA || !okB || !sameMeta(ma, mb) {
				return false
			}
		default:
			if !counted && !equality.Semantic.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
				return false
			}
		}
	}
	return true
}

// sameMeta tells whether a and b are equal but for their resource version
// and managed fields.
func sameMeta(a, b metav1.ObjectMeta) bool {
	a.ResourceVersion, a.ManagedFields = "", nil
	b.ResourceVersion, b.ManagedFields = "", nil
	return reflect.DeepEqual(a, b)
}

// sameMapButStatus is sameButStatus for unstructured objects.
func sameMapButStatus(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		switch {
		case !ok:
			return false
		case k == "status":
		case k == "metadata":
			ma, _ := va.(map[string]any)
			mb, _ := vb.(map[string]any)
			if !sameMetadata(ma, mb) {
				return false
			}
		case !reflect.DeepEqual(va, vb):
			return false
		}
	}
	return true
}

func sameMetadata(a, b map[string]any) bool {
	volatile := func(k string) bool { return k == "resourceVersion" || k == "managedFields" }
	n := 0
	for k, va := range a {
		if volatile(k) {
			continue
		}
		n++
		if vb, ok := b[k]; !ok || !reflect.DeepEqual(va, vb) {
			return false
		}
	}
	for k := range b {
		if !volatile(k) {
			n--
		}
	}
	return n == 0
}

// mayBeReady tells whether obj, of kind gvk, may be ready as health counts
// it (kstatus Current). For the workload kinds it checks, from their Go types,
// only what kstatus needs and nothing more: as many replicas as wanted, ready,
// updated and available, and a controller that has seen the current spec. kstatus also
// looks at a Deployment's conditions, and the last update of a rollout may be
// the one that only sets them, so an object that passes is reconciled at
// once, whatever its conditions say. Any other kind is asked of kstatus.
func mayBeReady(gvk schema.GroupVersionKind, obj client.Object) bool {
	counted := func(observed int64, want int32, counts ...int32) bool {
		for _, c := range counts {
			if c < want {
				return false
			}
		}
		return observed >= obj.GetGeneration()
	}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		s, want := o.Status, ptr.Deref(o.Spec.Replicas, 1)
		return s.Replicas == want && counted(s.ObservedGeneration, want, s.UpdatedReplicas, s.ReadyReplicas, s.AvailableReplicas)
	case *appsv1.StatefulSet:
		// Partitions and the OnDelete strategy end a rollout with replicas
		// not updated: only the counts every strategy shares are needed.
		s, want := o.Status, ptr.Deref(o.Spec.Replicas, 1)
		return o.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType || // kstatus: always Current
			s.Replicas == want && counted(s.ObservedGeneration, want, s.ReadyReplicas)
	case *appsv1.DaemonSet:
		s := o.Status
		return s.ObservedGeneration > 0 &&
			counted(s.ObservedGeneration, s.DesiredNumberScheduled, s.CurrentNumberScheduled, s.UpdatedNumberScheduled, s.NumberReady, s.NumberAvailable)
	}
	m, err := asMap(gvk, obj)
	if err != nil {
		return true
	}
	res, err := kstatus.Compute(&unstructured.Unstructured{Object: m})
	return err != nil || res.Status == kstatus.CurrentStatus
}

// asMap returns obj, of kind gvk, as the map an unstructured object holds.
func asMap(gvk schema.GroupVersionKind, obj client.Object) (map[string]any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.Object, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	// Typed objects read from a cache carry no kind; kstatus needs it.
	m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
	return m, nil
}
