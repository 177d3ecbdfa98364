package reconcile

import (
	"context"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rudder-operator/rudder/internal/owner"
)

// settle is how long an update that only an object's status shows, and
// that does not make the object ready, waits before its custom resource is
// reconciled. Updates within it are reconciled once: a pod replaced within it
// (a node drained, a pod evicted or deleted) costs one reconcile and no status
// write, where reporting the dip would cost two of each, and a rollout writes
// its progress at most every settle, not at every pod. A dip that lasts is
// reported settle late; an object that becomes ready is reported at once.
const settle = 2 * time.Second

// settlingHandler enqueues the custom resource of kind owner that owns the
// object an event is about (owner.Handler), at once, except for an update
// that changes only the object's status and does not make it ready (kstatus
// Current): that one waits settle. The queue merges the two, so a recovery
// within settle reconciles once, at once.
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
// changed nothing but the object's status, and did not make the object ready.
// Everything else, drift above all, is looked at at once.
func settles(kind schema.GroupVersionKind, old, new client.Object) bool {
	if old == nil || new == nil {
		return false
	}
	was, err1 := asMap(kind, old)
	is, err2 := asMap(kind, new)
	if err1 != nil || err2 != nil || !sameButStatus(was, is) {
		return false
	}
	return !becameReady(&unstructured.Unstructured{Object: was}, &unstructured.Unstructured{Object: is})
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

// sameButStatus tells whether a and b are equal but for their status, their
// resource version and their managed fields.
func sameButStatus(a, b map[string]any) bool {
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

// becameReady tells whether is is ready (kstatus Current) and was was not.
func becameReady(was, is *unstructured.Unstructured) bool {
	current := func(u *unstructured.Unstructured) bool {
		res, err := kstatus.Compute(u)
		return err == nil && res.Status == kstatus.CurrentStatus
	}
	return current(is) && !current(was)
}
