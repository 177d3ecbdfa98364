package reconcile_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/test/testenv"
)

// TestReconciler_PublishesStatusKeys follows a Gadget whose ConfigMap carries
// the rudder.dev/status-key annotation: its data shows in status, follows the
// spec, is refused under a key rudder or a hook owns, and goes when the chart
// stops publishing it. The Gadget CRD keeps unknown status fields, as a CRD
// declaring the published key does.
func TestReconciler_PublishesStatusKeys(t *testing.T) {
	ns := namespace(t)
	const name = "beacon"
	setSpec := func(spec string) {
		t.Helper()
		patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":`+spec+`}`))
		if err := k8s.Patch(ctx, get(t, gadgetGVK, ns, name), patch); err != nil {
			t.Fatal(err)
		}
	}
	published := func(cr *unstructured.Unstructured) ([]string, map[string]string, bool) {
		keys, _, _ := unstructured.NestedStringSlice(cr.Object, "status", "published")
		data, found, _ := unstructured.NestedStringMap(cr.Object, "status", "gadget")
		return keys, data, found
	}
	if err := k8s.Create(ctx, testenv.NewObject(gadgetGVK, ns, name, map[string]any{"message": "hi", "publish": "gadget"})); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "status.gadget holds the ConfigMap's data", func() error {
		cr := get(t, gadgetGVK, ns, name)
		keys, data, _ := published(cr)
		want := map[string]string{"message": "hi", "stamp": "stamped-beacon"}
		if !slices.Equal(keys, []string{"gadget"}) || fmt.Sprint(data) != fmt.Sprint(want) {
			return fmt.Errorf("status.published %v, status.gadget %v; want [gadget] and %v", keys, data, want)
		}
		if err := conditionIs(cr, status.ConditionPublished, metav1.ConditionTrue, status.ReasonPublished); err != nil {
			return err
		}
		if msg := testenv.Condition(cr, status.ConditionPublished).Message; msg != "status.gadget from ConfigMap/gadget-beacon" {
			return fmt.Errorf("Published message %q", msg)
		}
		return statusIs(cr, map[string]any{"phase": status.PhaseRunning, "stamp": "ok"})
	})

	setSpec(`{"message":"bye"}`)
	testenv.Eventually(t, "status.gadget follows the spec", func() error {
		cr := get(t, gadgetGVK, ns, name)
		if _, data, _ := published(cr); data["message"] != "bye" {
			return fmt.Errorf("status.gadget %v, want message bye", data)
		}
		return conditionIs(cr, status.ConditionPublished, metav1.ConditionTrue, status.ReasonPublished)
	})

	for _, key := range []string{"phase", "stamp"} { // rudder's, then the stamp hook's
		setSpec(`{"publish":"` + key + `"}`)
		testenv.Eventually(t, "status key "+key+" refused", func() error {
			cr := get(t, gadgetGVK, ns, name)
			if err := conditionIs(cr, status.ConditionPublished, metav1.ConditionFalse, status.ReasonStatusKeyRefused); err != nil {
				return err
			}
			msg := testenv.Condition(cr, status.ConditionPublished).Message
			if !strings.Contains(msg, `ConfigMap/gadget-beacon: status key "`+key+`" belongs to rudder or a hook`) {
				return fmt.Errorf("Published message %q does not name the object and the key", msg)
			}
			if keys, _, found := published(cr); found || len(keys) != 0 {
				return fmt.Errorf("status.published %v, status.gadget found %v; want both gone", keys, found)
			}
			return statusIs(cr, map[string]any{"phase": status.PhaseRunning, "stamp": "ok"})
		})
	}

	setSpec(`{"publish":"gadget"}`)
	testenv.Eventually(t, "published again", func() error {
		cr := get(t, gadgetGVK, ns, name)
		if _, _, found := published(cr); !found {
			return fmt.Errorf("no status.gadget (status: %v)", cr.Object["status"])
		}
		return conditionIs(cr, status.ConditionPublished, metav1.ConditionTrue, status.ReasonPublished)
	})
	setSpec(`{"publish":null}`)
	testenv.Eventually(t, "no longer published", func() error {
		cr := get(t, gadgetGVK, ns, name)
		if keys, _, found := published(cr); found || len(keys) != 0 {
			return fmt.Errorf("status.published %v, status.gadget found %v; want both gone", keys, found)
		}
		if c := testenv.Condition(cr, status.ConditionPublished); c != nil {
			return fmt.Errorf("Published condition %v, want none", c)
		}
		return statusIs(cr, map[string]any{"phase": status.PhaseRunning, "stamp": "ok"})
	})
}
