package reconcile_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/test/testenv"
)

var gaugeGVK = schema.GroupVersionKind{Group: "test.rudder.dev", Version: "v1", Kind: "Gauge"}

// Chart tests run beside the workers, not on them: 16 Gauges (16 workers)
// whose test pods never finish (envtest runs no kubelet) leave another
// Gauge's install and upgrade to go ahead, and a run that ends is recorded.
func TestReconciler_TestsDoNotHoldWorkers(t *testing.T) {
	const stuck = 16
	ns := namespace(t)
	name := func(i int) string { return fmt.Sprintf("stuck-%02d", i) }
	parallel(t, stuck, func(i int) error {
		u := testenv.NewObject(gaugeGVK, ns, name(i), map[string]any{"testPod": true})
		u.SetAnnotations(map[string]string{status.AnnotationTestRequestedAt: "1"})
		return k8s.Create(ctx, u)
	})
	testenv.EventuallyWithin(t, 3*time.Minute, fmt.Sprintf("%d Gauges' tests running", stuck), func() error {
		for i := range stuck {
			if err := conditionIs(get(t, gaugeGVK, ns, name(i)), status.ConditionTested, metav1.ConditionUnknown, status.ReasonTestRunning); err != nil {
				return fmt.Errorf("%s: %w", name(i), err)
			}
		}
		return nil
	})

	other := testenv.NewObject(gaugeGVK, ns, "other", map[string]any{"message": "one"})
	if err := k8s.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	release := "gauge-other"
	testenv.EventuallyWithin(t, time.Minute, "the other Gauge installed while the tests run", func() error {
		return testenv.RevisionsAre(ctx, k8s, ns, release, "1:deployed")
	})
	if err := k8s.Patch(ctx, other, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"message":"two"}}`))); err != nil {
		t.Fatal(err)
	}
	testenv.EventuallyWithin(t, time.Minute, "the other Gauge upgraded while the tests run", func() error {
		return testenv.RevisionsAre(ctx, k8s, ns, release, "1:superseded", "2:deployed")
	})

	// The test pod of the first ends: its run ends and is recorded.
	pod := &corev1.Pod{}
	testenv.Eventually(t, "the test pod of "+name(0), func() error {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gauge-" + name(0) + "-test"}, pod)
		if err != nil {
			return fmt.Errorf("%w (status %v)", err, get(t, gaugeGVK, ns, name(0)).Object["status"])
		}
		return nil
	})
	pod.Status.Phase = corev1.PodSucceeded
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the first Gauge's test run recorded", func() error {
		u := get(t, gaugeGVK, ns, name(0))
		if err := conditionIs(u, status.ConditionTested, metav1.ConditionTrue, status.ReasonTestSucceeded); err != nil {
			return err
		}
		return statusIs(u, map[string]any{"lastHandledTestAt": "1"})
	})
	if err := conditionIs(get(t, gaugeGVK, ns, name(1)), status.ConditionTested, metav1.ConditionUnknown, status.ReasonTestRunning); err != nil {
		t.Errorf("%s, whose test pod never ends: %v", name(1), err)
	}
}
