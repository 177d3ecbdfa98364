package reconcile_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/test/testenv"
)

var gizmoGVK = schema.GroupVersionKind{Group: "test.rudder.dev", Version: "v1", Kind: "Gizmo"}

// gauge reads a series of the manager's metrics registry: the sum of the
// samples of name whose labels include match.
func gauge(t *testing.T, name string, match map[string]string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if labelsInclude(m, match) {
				sum += m.GetGauge().GetValue() + m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

func labelsInclude(m *dto.Metric, match map[string]string) bool {
	found := 0
	for _, l := range m.GetLabel() {
		if v, ok := match[l.GetName()]; ok && v == l.GetValue() {
			found++
		}
	}
	return found == len(match)
}

// A resource leaves by one of three paths: deleted (uninstalled), out of the
// selector then deleted, or its finalizer removed by hand then deleted (the
// reconciler only ever sees NotFound). Whatever the path, the reconciler's
// memory of it is freed: 1,000 resources come and go, and the
// rudder_reconciler_entries gauge of their kind is back at 0.
func TestReconciler_MemoryIsReleased(t *testing.T) {
	const n = 1000
	ns := namespace(t)
	entries := map[string]string{"kind": "Gizmo"}
	name := func(i int) string { return fmt.Sprintf("g-%04d", i) }
	parallel(t, n, func(i int) error {
		return k8s.Create(ctx, testenv.NewObject(gizmoGVK, ns, name(i), map[string]any{"message": "hi"}))
	})
	testenv.EventuallyWithin(t, 10*time.Minute, fmt.Sprintf("%d Gizmos released", n), func() error {
		released := 0
		for _, u := range list(t, gizmoGVK, ns) {
			if c := testenv.Condition(&u, "Released"); c != nil && c.Status == metav1.ConditionTrue {
				released++
			}
		}
		if released < n {
			return fmt.Errorf("%d of %d released", released, n)
		}
		return nil
	})
	if got := gauge(t, "rudder_reconciler_entries", entries); got < n {
		t.Fatalf("rudder_reconciler_entries{kind=Gizmo} = %v with %d resources deployed, want at least %d", got, n, n)
	}

	parallel(t, n, func(i int) error {
		u := get(t, gizmoGVK, ns, name(i))
		switch i % 3 {
		case 1: // leaves the selector first
			if err := k8s.Patch(ctx, u, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"rudder.test/ignore":"yes"}}}`))); err != nil {
				return err
			}
		case 2: // its finalizer removed by hand: rudder only sees it gone
			if err := k8s.Patch(ctx, u, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`))); err != nil {
				return err
			}
		}
		return k8s.Delete(ctx, u)
	})
	testenv.EventuallyWithin(t, 10*time.Minute, "every Gizmo gone", func() error {
		if left := len(list(t, gizmoGVK, ns)); left > 0 {
			return fmt.Errorf("%d Gizmos left", left)
		}
		return nil
	})
	testenv.Eventually(t, "the reconciler's memory of them freed", func() error {
		if got := gauge(t, "rudder_reconciler_entries", entries); got != 0 {
			return fmt.Errorf("rudder_reconciler_entries{kind=Gizmo} = %v, want 0", got)
		}
		return nil
	})
	// Those that left the selector were uninstalled on deletion all the same.
	for i := 1; i < n; i += 3 {
		if revs, err := revisions(ns, "gizmo-"+name(i)); err != nil || len(revs) > 0 {
			t.Fatalf("release gizmo-%s after deletion out of the selector: revisions %v (err %v), want none", name(i), revs, err)
		}
	}
}

// A resource whose labels leave the watch's selector keeps its release as it
// is, with an event saying so, and its deletion still uninstalls the release
// and lets it go (it once kept rudder's finalizer forever).
func TestReconciler_LeavingTheSelector(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, gadgetGVK, ns, "leaver", map[string]any{"message": "one"})
	waitRevisions(t, ns, "gadget-leaver", "1:deployed")

	patch := []byte(`{"metadata":{"labels":{"rudder.test/ignore":"yes"}},"spec":{"message":"two"}}`)
	if err := k8s.Patch(ctx, get(t, gadgetGVK, ns, "leaver"), client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "an Unselected event", func() error {
		var evs eventsv1.EventList
		if err := k8s.List(ctx, &evs, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Reason == status.ReasonUnselected && e.Regarding.Name == "leaver" &&
				strings.Contains(e.Note, "release gadget-leaver stays as it is") {
				return nil
			}
		}
		return fmt.Errorf("no %s event among %d", status.ReasonUnselected, len(evs.Items))
	})
	// The event came from the reconcile of the spec change: it left the release as it was.
	waitRevisions(t, ns, "gadget-leaver", "1:deployed")
	configMapSays(t, ns, "gadget-leaver", "one")

	if err := k8s.Delete(ctx, get(t, gadgetGVK, ns, "leaver")); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the Gadget gone and its release uninstalled", func() error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gadgetGVK)
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "leaver"}, u); client.IgnoreNotFound(err) != nil || err == nil {
			return fmt.Errorf("still there (finalizers %v, err %w)", u.GetFinalizers(), err)
		}
		if revs, err := revisions(ns, "gadget-leaver"); err != nil || len(revs) > 0 {
			return fmt.Errorf("revisions %v, err %w", revs, err)
		}
		return client.IgnoreNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gadget-leaver"}, &corev1.ConfigMap{}))
	})
	if _, ok := stamp.finalized.Load(ns + "/leaver"); !ok {
		t.Error("the hook's Finalize did not run for a resource deleted out of the selector")
	}
}

// parallel runs do(0..n-1) on 8 goroutines and fails t on the first error.
func parallel(t *testing.T, n int, do func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := do(i); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

func list(t *testing.T, gvk schema.GroupVersionKind, ns string) []unstructured.Unstructured {
	t.Helper()
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := k8s.List(ctx, l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return l.Items
}
