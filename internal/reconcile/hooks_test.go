package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/test/testenv"
)

// stampHook is the Gadget kind's test hook: it contributes a value and a
// status field, owns the Stamped condition, fails on demand and records
// which resources it ran for and finalized.
type stampHook struct{ finalized, runs sync.Map }

var stamp = &stampHook{}

func (*stampHook) Name() string      { return "stamp" }
func (*stampHook) Condition() string { return "Stamped" }

func (s *stampHook) Reconcile(_ context.Context, obj *unstructured.Unstructured, _ map[string]any) (hook.Result, error) {
	n, _ := s.runs.LoadOrStore(obj.GetNamespace()+"/"+obj.GetName(), new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	if msg, _, _ := unstructured.NestedString(obj.Object, "spec", "hookFail"); msg != "" {
		return hook.Result{}, errors.New(msg)
	}
	return hook.Result{
		Values:    map[string]any{"stamp": "stamped-" + obj.GetName()},
		Status:    map[string]any{"stamp": "ok"},
		Condition: metav1.Condition{Status: metav1.ConditionTrue, Reason: "Stamped", Message: "stamped"},
	}, nil
}

// Paused says in status that the resource is paused (hook.Pauser), and keeps the condition.
func (*stampHook) Paused(*unstructured.Unstructured) hook.Result {
	return hook.Result{Status: map[string]any{"stamp": "paused"},
		Condition: metav1.Condition{Status: metav1.ConditionTrue, Reason: "Stamped", Message: "stamped"}}
}

func (s *stampHook) Finalize(_ context.Context, obj *unstructured.Unstructured) error {
	s.finalized.Store(obj.GetNamespace()+"/"+obj.GetName(), true)
	return nil
}

func TestReconciler_Hooks(t *testing.T) {
	ns := namespace(t)
	if err := k8s.Create(ctx, testenv.NewObject(gadgetGVK, ns, "stamped", map[string]any{"message": "hi"})); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "gadget-stamped", "1:deployed")
	var cm corev1.ConfigMap
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gadget-stamped"}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["stamp"] != "stamped-stamped" {
		t.Errorf("ConfigMap stamp = %q, want the hook's value", cm.Data["stamp"])
	}
	testenv.Eventually(t, "hook status and condition", func() error {
		cr := get(t, gadgetGVK, ns, "stamped")
		if err := statusIs(cr, map[string]any{"stamp": "ok", "phase": "Running"}); err != nil {
			return err
		}
		return conditionIs(cr, "Stamped", metav1.ConditionTrue, "Stamped")
	})

	// A failing hook shows in its condition and blocks any Helm step.
	patch := []byte(`{"spec":{"hookFail":"out of ink"}}`)
	if err := k8s.Patch(ctx, get(t, gadgetGVK, ns, "stamped"), client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "hook failure in status", func() error {
		cr := get(t, gadgetGVK, ns, "stamped")
		if err := conditionIs(cr, "Stamped", metav1.ConditionFalse, status.ReasonHookFailed); err != nil {
			return err
		}
		if msg := testenv.Condition(cr, "Stamped").Message; msg != "out of ink" {
			return fmt.Errorf("Stamped message %q", msg)
		}
		return statusIs(cr, map[string]any{"phase": "Failed", "observedGeneration": 2})
	})
	waitRevisions(t, ns, "gadget-stamped", "1:deployed")

	// Fixed: same values as revision 1, so no new revision either.
	patch = []byte(`{"spec":{"hookFail":null}}`)
	if err := k8s.Patch(ctx, get(t, gadgetGVK, ns, "stamped"), client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "hook recovered", func() error {
		cr := get(t, gadgetGVK, ns, "stamped")
		if err := conditionIs(cr, "Stamped", metav1.ConditionTrue, "Stamped"); err != nil {
			return err
		}
		return statusIs(cr, map[string]any{"phase": "Running"})
	})
	waitRevisions(t, ns, "gadget-stamped", "1:deployed")

	if err := k8s.Delete(ctx, get(t, gadgetGVK, ns, "stamped")); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "gadget-stamped")
	testenv.Eventually(t, "hook finalized", func() error {
		if _, ok := stamp.finalized.Load(ns + "/stamped"); !ok {
			return errors.New("Finalize not called")
		}
		return nil
	})
}

// runsOf returns how many times the stamp hook ran for a resource.
func (s *stampHook) runsOf(ns, name string) int64 {
	n, ok := s.runs.Load(ns + "/" + name)
	if !ok {
		return 0
	}
	return n.(*atomic.Int64).Load()
}

// Paused means no writes at all: the kind's hooks, which create and delete
// Secrets, claims and CronJobs, do not run either, while the spec changes.
func TestReconciler_PausedRunsNoHooks(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, gadgetGVK, ns, "asleep", map[string]any{"message": "one"})
	waitRevisions(t, ns, "gadget-asleep", "1:deployed")
	pause := []byte(`{"metadata":{"annotations":{"rudder.dev/paused":"true"}}}`)
	if err := k8s.Patch(ctx, get(t, gadgetGVK, ns, "asleep"), client.RawPatch("application/merge-patch+json", pause)); err != nil {
		t.Fatal(err)
	}
	conditionSays(t, gadgetGVK, ns, "asleep", "Paused", metav1.ConditionTrue, "Paused")
	before := stamp.runsOf(ns, "asleep")
	// A hook.Pauser says so in its status, without running.
	testenv.Eventually(t, "the hook's paused status", func() error {
		cr := get(t, gadgetGVK, ns, "asleep")
		if err := statusIs(cr, map[string]any{"stamp": "paused"}); err != nil {
			return err
		}
		return conditionIs(cr, "Stamped", metav1.ConditionTrue, "Stamped")
	})

	patchSpec(t, gadgetGVK, ns, "asleep", `{"message":"two"}`)
	// The reconcile of the spec change ran: it says the change waits.
	conditionSays(t, gadgetGVK, ns, "asleep", "Released", metav1.ConditionUnknown, "Paused", "wait until the annotation")
	if after := stamp.runsOf(ns, "asleep"); after != before {
		t.Errorf("the hook ran %d times while paused", after-before)
	}
	waitRevisions(t, ns, "gadget-asleep", "1:deployed")
}

// annotationWakes, on a ConfigMap, names the Gadget of its namespace that a
// change of it concerns (the stamp hook's hook.Watcher).
const annotationWakes = "test.rudder.dev/wakes"

var _ hook.Watcher = (*stampHook)(nil)

// Watches makes the stamp hook a hook.Watcher of ConfigMaps.
func (*stampHook) Watches() []hook.Watch {
	return []hook.Watch{{
		Object: &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}},
		Concerns: func(res *unstructured.Unstructured, o metav1.Object) bool {
			return o.GetAnnotations()[annotationWakes] == res.GetName()
		},
	}}
}

// A change of an object a hook watches (hook.Watcher) reconciles the
// resources it concerns at once, and only those.
func TestReconciler_HookWatches(t *testing.T) {
	ns := namespace(t)
	for _, name := range []string{"woken", "asleep"} {
		if err := k8s.Create(ctx, testenv.NewObject(gadgetGVK, ns, name, map[string]any{"message": "hi"})); err != nil {
			t.Fatal(err)
		}
		waitRevisions(t, ns, "gadget-"+name, "1:deployed")
	}
	var woken, asleep int64
	testenv.Eventually(t, "the hook's runs settled", func() error {
		w, a := stamp.runsOf(ns, "woken"), stamp.runsOf(ns, "asleep")
		if w != woken || a != asleep || w == 0 {
			woken, asleep = w, a
			return fmt.Errorf("runs %d and %d", w, a)
		}
		return nil
	})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "waker", Namespace: ns,
		Annotations: map[string]string{annotationWakes: "woken"}}}
	if err := k8s.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	testenv.EventuallyWithin(t, 5*time.Second, "the hook run for Gadget woken", func() error {
		if n := stamp.runsOf(ns, "woken"); n <= woken {
			return fmt.Errorf("runs %d", n)
		}
		return nil
	})
	if n := stamp.runsOf(ns, "asleep"); n != asleep {
		t.Errorf("the hook ran %d more times for Gadget asleep, which the ConfigMap does not concern", n-asleep)
	}
}
