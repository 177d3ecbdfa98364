package reconcile_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/owner"
	"github.com/rudder-operator/rudder/test/testenv"
)

// The cache of the releases' objects holds no ConfigMap's data, only its
// digest (owner.Whole): an edit of a release's ConfigMap data is put back all
// the same, without a new revision, and a large ConfigMap that only carries
// rudder's label, named as the release's, changes nothing.
func TestReconciler_RepairsConfigMapDataTheCacheDoesNotHold(t *testing.T) {
	ns := namespace(t)
	decoy := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "decoy", Labels: map[string]string{owner.LabelRelease: "gadget-data"}},
		Data:       map[string]string{"blob": strings.Repeat("x", 400<<10)},
	}
	if err := k8s.Create(ctx, decoy); err != nil {
		t.Fatal(err)
	}
	create(t, gadgetGVK, ns, "data", map[string]any{"message": "hi"})
	waitRevisions(t, ns, "gadget-data", "1:deployed")
	key := client.ObjectKey{Namespace: ns, Name: "gadget-data"}
	var cm corev1.ConfigMap
	if err := k8s.Get(ctx, key, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["message"] != "hi" {
		t.Fatalf("message %q, want hi", cm.Data["message"])
	}

	cm.Data["message"] = "evil"
	cm.Data["extra"] = "added"
	if err := k8s.Update(ctx, &cm); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "edited ConfigMap data put back", func() error {
		var again corev1.ConfigMap
		if err := k8s.Get(ctx, key, &again); err != nil {
			return err
		}
		if again.Data["message"] != "hi" {
			return fmt.Errorf("message %q, want hi", again.Data["message"])
		}
		return nil
	})
	var again corev1.ConfigMap
	if err := k8s.Get(ctx, key, &again); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{owner.AnnotationDataDigest, owner.AnnotationMetadataOnly} {
		if _, ok := again.Annotations[k]; ok {
			t.Errorf("annotation %s, which only the cache holds, written to the API server", k)
		}
	}
	waitRevisions(t, ns, "gadget-data", "1:deployed")
}
