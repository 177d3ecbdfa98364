package reconcile_test

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/owner"
	"github.com/rudder-operator/rudder/test/testenv"
)

// The cache of the releases' objects selects on owner.LabelRelease: every
// rendered object carries it, and an object without it — written by a rudder
// that did not label, or stripped by hand — is labeled again as drift, with
// no new revision, and then repaired like any other.
func TestReconciler_LabelsTheObjectsItCaches(t *testing.T) {
	ns := namespace(t)
	if err := k8s.Create(ctx, testenv.NewObject(webappGVK, ns, "tagged", webappSpec(1, "nginx:1.25"))); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "webapp-tagged", "1:deployed")
	key := client.ObjectKey{Namespace: ns, Name: "tagged"}
	for _, obj := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}} {
		testenv.Eventually(t, fmt.Sprintf("%T labeled", obj), func() error {
			if err := k8s.Get(ctx, key, obj); err != nil {
				return err
			}
			if got := obj.GetLabels()[owner.LabelRelease]; got != "webapp-tagged" {
				return fmt.Errorf("label %s = %q, want webapp-tagged", owner.LabelRelease, got)
			}
			return nil
		})
	}

	// Strip the label and edit the image in one write: the object leaves the
	// cache, and must still be found, relabeled and repaired.
	var dep appsv1.Deployment
	if err := k8s.Get(ctx, key, &dep); err != nil {
		t.Fatal(err)
	}
	delete(dep.Labels, owner.LabelRelease)
	dep.Spec.Template.Spec.Containers[0].Image = "evil:latest"
	if err := k8s.Update(ctx, &dep); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "unlabeled Deployment labeled and put back", func() error {
		var again appsv1.Deployment
		if err := k8s.Get(ctx, key, &again); err != nil {
			return err
		}
		if again.UID != dep.UID {
			return fmt.Errorf("the Deployment was replaced (uid %s, was %s): it should have been patched", again.UID, dep.UID)
		}
		if got, img := again.Labels[owner.LabelRelease], again.Spec.Template.Spec.Containers[0].Image; got != "webapp-tagged" || img != "nginx:1.25" {
			return fmt.Errorf("label %q image %s, want webapp-tagged nginx:1.25", got, img)
		}
		return nil
	})
	waitRevisions(t, ns, "webapp-tagged", "1:deployed")
}
