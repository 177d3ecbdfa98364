package reconcile_test

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/test/testenv"
)

// A pod lost and replaced at once costs no status write: the dip only the
// Deployment's status shows waits 2 s, and its recovery is reconciled at once.
// A dip that lasts is reported.
func TestReconciler_ReportsADipInReadinessOnceItLasts(t *testing.T) {
	ns := namespace(t)
	if err := k8s.Create(ctx, testenv.NewObject(webappGVK, ns, "dip", webappSpec(2, "nginx:1.25"))); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: ns, Name: "dip"}
	var dep appsv1.Deployment
	testenv.Eventually(t, "Deployment exists", func() error { return k8s.Get(ctx, key, &dep) })
	setDeploymentStatus(t, &dep, 2, 2)
	var rv string
	testenv.Eventually(t, "Running, and its status left as it is for 3 s", func() error {
		cr := get(t, webappGVK, ns, "dip")
		if err := statusIs(cr, map[string]any{"phase": "Running", "readyReplicas": 2}); err != nil {
			return err
		}
		if cr.GetResourceVersion() != rv {
			rv = cr.GetResourceVersion()
			time.Sleep(3 * time.Second)
			return fmt.Errorf("resource version %s changed", rv)
		}
		return nil
	})

	setDeploymentStatus(t, &dep, 2, 1)
	setDeploymentStatus(t, &dep, 2, 2)
	time.Sleep(3 * time.Second)
	if cr := get(t, webappGVK, ns, "dip"); cr.GetResourceVersion() != rv {
		t.Errorf("the WebApp was written (resource version %s, was %s) for a pod lost and replaced at once; status %v",
			cr.GetResourceVersion(), rv, cr.Object["status"])
	}

	setDeploymentStatus(t, &dep, 2, 1)
	testenv.Eventually(t, "the lasting dip reported", func() error {
		return statusIs(get(t, webappGVK, ns, "dip"), map[string]any{"message": "1/2 replicas ready", "readyReplicas": 1})
	})
}
