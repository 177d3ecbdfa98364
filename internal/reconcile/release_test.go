package reconcile_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/reconcile"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/test/testenv"
)

var ctx = context.Background()

func webappSpec(replicas int64, image string) map[string]any {
	return map[string]any{"replicas": replicas, "image": image, "port": int64(80)}
}

func TestReconciler_Install(t *testing.T) {
	ns := namespace(t)
	if err := k8s.Create(ctx, testenv.NewObject(webappGVK, ns, "shop", webappSpec(2, "nginx:1.25"))); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "release revision 1 deployed", func() error {
		revs, err := revisions(ns, "webapp-shop")
		if err != nil || !slices.Equal(revs, []string{"1:deployed"}) {
			return fmt.Errorf("revisions %v, err %w", revs, err)
		}
		return nil
	})
	var dep appsv1.Deployment
	testenv.Eventually(t, "Deployment named after the custom resource", func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop"}, &dep)
	})
	if *dep.Spec.Replicas != 2 || dep.Spec.Template.Spec.Containers[0].Image != "nginx:1.25" {
		t.Errorf("Deployment replicas %d image %s, want 2 nginx:1.25", *dep.Spec.Replicas, dep.Spec.Template.Spec.Containers[0].Image)
	}
	cr := get(t, webappGVK, ns, "shop")
	if len(dep.OwnerReferences) != 1 || dep.OwnerReferences[0].UID != cr.GetUID() {
		t.Errorf("Deployment owner references %v, want the WebApp", dep.OwnerReferences)
	}
	if !slices.Contains(cr.GetFinalizers(), reconcile.Finalizer) {
		t.Errorf("finalizers %v, want %s", cr.GetFinalizers(), reconcile.Finalizer)
	}
	// No controller-manager runs in envtest: the Deployment never becomes available.
	testenv.Eventually(t, "status after install", func() error {
		cr := get(t, webappGVK, ns, "shop")
		if err := statusIs(cr, map[string]any{"observedGeneration": 1, "phase": "Deploying", "release.revision": 1,
			"release.name": "webapp-shop", "release.chart": "webapp", "release.status": "deployed"}); err != nil {
			return err
		}
		if err := conditionIs(cr, "Released", metav1.ConditionTrue, status.ReasonInstallSucceeded); err != nil {
			return err
		}
		if err := conditionIs(cr, "Ready", metav1.ConditionFalse, status.ReasonProgressing); err != nil {
			return err
		}
		if msg := testenv.Condition(cr, "Ready").Message; !strings.Contains(msg, "Deployment/shop") {
			return fmt.Errorf("Ready message %q does not name the Deployment", msg)
		}
		return nil
	})
	if _, found, _ := unstructured.NestedFieldNoCopy(get(t, webappGVK, ns, "shop").Object, "status", "manifest"); found {
		t.Error("status holds the manifest")
	}
}

func TestReconciler_UpgradeOnlyWhenValuesChange(t *testing.T) {
	ns := namespace(t)
	cr := testenv.NewObject(webappGVK, ns, "blog", webappSpec(1, "nginx:1.25"))
	if err := k8s.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "webapp-blog", "1:deployed")

	// An annotation edit reconciles but changes no values: no new revision.
	touch := []byte(`{"metadata":{"annotations":{"note":"touched"}}}`)
	if err := k8s.Patch(ctx, get(t, webappGVK, ns, "blog"), client.RawPatch("application/merge-patch+json", touch)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "status still on revision 1", func() error {
		return statusIs(get(t, webappGVK, ns, "blog"), map[string]any{"release.revision": 1, "observedGeneration": 1})
	})
	waitRevisions(t, ns, "webapp-blog", "1:deployed")

	// A spec change upgrades.
	patch := []byte(`{"spec":{"replicas":4,"image":"nginx:1.26"}}`)
	if err := k8s.Patch(ctx, get(t, webappGVK, ns, "blog"), client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "webapp-blog", "1:superseded", "2:deployed")
	testenv.Eventually(t, "Deployment upgraded", func() error {
		var dep appsv1.Deployment
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "blog"}, &dep); err != nil {
			return err
		}
		if *dep.Spec.Replicas != 4 || dep.Spec.Template.Spec.Containers[0].Image != "nginx:1.26" {
			return fmt.Errorf("replicas %d image %s", *dep.Spec.Replicas, dep.Spec.Template.Spec.Containers[0].Image)
		}
		return nil
	})
	testenv.Eventually(t, "status on revision 2", func() error {
		cr := get(t, webappGVK, ns, "blog")
		if err := statusIs(cr, map[string]any{"release.revision": 2, "observedGeneration": 2, "phase": "Updating"}); err != nil {
			return err
		}
		return conditionIs(cr, "Released", metav1.ConditionTrue, status.ReasonUpgradeSucceeded)
	})
}

func TestReconciler_RepairsDriftWithoutNewRevision(t *testing.T) {
	ns := namespace(t)
	if err := k8s.Create(ctx, testenv.NewObject(webappGVK, ns, "drift", webappSpec(3, "nginx:1.25"))); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "webapp-drift", "1:deployed")
	key := client.ObjectKey{Namespace: ns, Name: "drift"}
	var svc corev1.Service
	testenv.Eventually(t, "Service exists", func() error { return k8s.Get(ctx, key, &svc) })

	if err := k8s.Delete(ctx, &svc); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "deleted Service put back", func() error {
		var again corev1.Service
		if err := k8s.Get(ctx, key, &again); err != nil {
			return err
		}
		if again.UID == svc.UID {
			return fmt.Errorf("still the old Service")
		}
		return nil
	})

	var dep appsv1.Deployment
	if err := k8s.Get(ctx, key, &dep); err != nil {
		t.Fatal(err)
	}
	dep.Spec.Template.Spec.Containers[0].Image = "evil:latest"
	dep.Spec.Replicas = ptr(int32(9))
	if err := k8s.Update(ctx, &dep); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "edited Deployment put back", func() error {
		if err := k8s.Get(ctx, key, &dep); err != nil {
			return err
		}
		if img := dep.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.25" || *dep.Spec.Replicas != 3 {
			return fmt.Errorf("image %s replicas %d", img, *dep.Spec.Replicas)
		}
		return nil
	})

	// A label is metadata: changing it bumps no generation, and rudder,
	// which skips comparing a Deployment whose generation it has seen
	// match, must put it back all the same.
	gen := dep.Generation
	dep.Labels["app.kubernetes.io/name"] = "evil"
	if err := k8s.Update(ctx, &dep); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "relabeled Deployment put back", func() error {
		if err := k8s.Get(ctx, key, &dep); err != nil {
			return err
		}
		if l := dep.Labels["app.kubernetes.io/name"]; l != "webapp" {
			return fmt.Errorf("label app.kubernetes.io/name %q", l)
		}
		return nil
	})
	if dep.Generation != gen {
		t.Errorf("generation %d after a label change, want %d: the test no longer shows a metadata-only change", dep.Generation, gen)
	}
	waitRevisions(t, ns, "webapp-drift", "1:deployed")
}

func TestReconciler_ReadyFromObjectStatus(t *testing.T) {
	ns := namespace(t)
	if err := k8s.Create(ctx, testenv.NewObject(webappGVK, ns, "ready", webappSpec(2, "nginx:1.25"))); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: ns, Name: "ready"}
	var dep appsv1.Deployment
	testenv.Eventually(t, "Deployment exists", func() error { return k8s.Get(ctx, key, &dep) })

	// Play the Deployment controller: one of two replicas ready.
	setDeploymentStatus(t, &dep, 2, 1)
	testenv.Eventually(t, "1/2 replicas ready", func() error {
		cr := get(t, webappGVK, ns, "ready")
		return statusIs(cr, map[string]any{"phase": "Deploying", "message": "1/2 replicas ready", "replicas": 2, "readyReplicas": 1})
	})
	setDeploymentStatus(t, &dep, 2, 2)
	testenv.Eventually(t, "all replicas ready", func() error {
		cr := get(t, webappGVK, ns, "ready")
		if err := statusIs(cr, map[string]any{"phase": "Running", "message": "All replicas are ready", "readyReplicas": 2}); err != nil {
			return err
		}
		return conditionIs(cr, "Ready", metav1.ConditionTrue, status.ReasonReady)
	})
}

// A rollout's progress that moves faster than rudder writes it is not lost:
// its last state is written by the reconcile rudder requeued for it, with no
// further change to the Deployment to trigger one.
func TestReconciler_WritesTheLastProgressOfARollout(t *testing.T) {
	ns := namespace(t)
	if err := k8s.Create(ctx, testenv.NewObject(webappGVK, ns, "pace", webappSpec(4, "nginx:1.25"))); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: ns, Name: "pace"}
	var dep appsv1.Deployment
	testenv.Eventually(t, "Deployment exists", func() error { return k8s.Get(ctx, key, &dep) })
	setDeploymentStatus(t, &dep, 4, 1)
	testenv.Eventually(t, "1/4 replicas ready", func() error {
		return statusIs(get(t, webappGVK, ns, "pace"), map[string]any{"phase": "Deploying", "message": "1/4 replicas ready", "readyReplicas": 1})
	})
	setDeploymentStatus(t, &dep, 4, 2)
	setDeploymentStatus(t, &dep, 4, 3)
	testenv.Eventually(t, "3/4 replicas ready", func() error {
		return statusIs(get(t, webappGVK, ns, "pace"), map[string]any{"phase": "Deploying", "message": "3/4 replicas ready", "readyReplicas": 3})
	})
}

func TestReconciler_KindsWithSameNameNeverShareARelease(t *testing.T) {
	ns := namespace(t)
	if err := k8s.Create(ctx, testenv.NewObject(webappGVK, ns, "twin", webappSpec(1, "nginx:1.25"))); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Create(ctx, testenv.NewObject(gadgetGVK, ns, "twin", map[string]any{"message": "gadget"})); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "webapp-twin", "1:deployed")
	waitRevisions(t, ns, "gadget-twin", "1:deployed")

	if err := k8s.Delete(ctx, get(t, gadgetGVK, ns, "twin")); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "gadget-twin")
	waitRevisions(t, ns, "webapp-twin", "1:deployed")
	var dep appsv1.Deployment
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "twin"}, &dep); err != nil {
		t.Errorf("the WebApp's Deployment is gone with the Gadget: %v", err)
	}
}

func TestReconciler_Uninstall(t *testing.T) {
	ns := namespace(t)
	spec := webappSpec(1, "nginx:1.25")
	spec["storage"] = map[string]any{"enabled": true, "size": "1Gi", "keepOnDelete": false} // kept by default
	if err := k8s.Create(ctx, testenv.NewObject(webappGVK, ns, "gone", spec)); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "webapp-gone", "1:deployed")
	if err := k8s.Delete(ctx, get(t, webappGVK, ns, "gone")); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "custom resource gone", func() error {
		u := testenv.NewObject(webappGVK, ns, "gone", nil)
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(u), u); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (finalizers %v): %w", u.GetFinalizers(), err)
		}
		return nil
	})
	waitRevisions(t, ns, "webapp-gone")
	key := client.ObjectKey{Namespace: ns, Name: "gone"}
	for _, obj := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &corev1.PersistentVolumeClaim{}} {
		if err := k8s.Get(ctx, key, obj); err == nil && obj.GetDeletionTimestamp().IsZero() {
			t.Errorf("%T left behind", obj)
		}
	}
}

func TestReconciler_RenderFailureIsReportedThenRecovers(t *testing.T) {
	ns := namespace(t)
	if err := k8s.Create(ctx, testenv.NewObject(gadgetGVK, ns, "broken", map[string]any{"fail": "the gadget is broken"})); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "install failure in status", func() error {
		cr := get(t, gadgetGVK, ns, "broken")
		if err := statusIs(cr, map[string]any{"phase": "Failed"}); err != nil {
			return err
		}
		if err := conditionIs(cr, "Released", metav1.ConditionFalse, status.ReasonInstallFailed); err != nil {
			return err
		}
		if msg := testenv.Condition(cr, "Released").Message; !strings.Contains(msg, "the gadget is broken") {
			return fmt.Errorf("Released message %q does not say why", msg)
		}
		return nil
	})
	waitRevisions(t, ns, "gadget-broken") // a render failure stores nothing

	patch := []byte(`{"spec":{"fail":""}}`)
	if err := k8s.Patch(ctx, get(t, gadgetGVK, ns, "broken"), client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "gadget-broken", "1:deployed")
	testenv.Eventually(t, "running after the fix", func() error {
		cr := get(t, gadgetGVK, ns, "broken")
		if err := statusIs(cr, map[string]any{"phase": "Running", "message": "All 1 objects are ready"}); err != nil {
			return err
		}
		return conditionIs(cr, "Released", metav1.ConditionTrue, status.ReasonInstallSucceeded)
	})
}

// An error longer than a condition message may be (metav1.Condition's
// 32768 characters) is cut to fit: the status is written all the same.
func TestReconciler_CutsAConditionMessageToFit(t *testing.T) {
	ns := namespace(t)
	why := strings.Repeat("ü", 40000) // two bytes each: the API server counts characters
	if err := k8s.Create(ctx, testenv.NewObject(gadgetGVK, ns, "verbose", map[string]any{"fail": why})); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "install failure in status", func() error {
		cr := get(t, gadgetGVK, ns, "verbose")
		if err := conditionIs(cr, "Released", metav1.ConditionFalse, status.ReasonInstallFailed); err != nil {
			return err
		}
		msg := testenv.Condition(cr, "Released").Message
		switch {
		case !strings.Contains(msg, why[:2000]):
			return fmt.Errorf("Released message %.100q... does not say why", msg)
		case !strings.HasSuffix(msg, "… (cut)") || !utf8.ValidString(msg):
			return fmt.Errorf("Released message ...%q is not cut at a character, with the mark", msg[len(msg)-40:])
		case utf8.RuneCountInString(msg) != 32768:
			return fmt.Errorf("Released message has %d characters, want 32768", utf8.RuneCountInString(msg))
		}
		return nil
	})
}

func waitRevisions(t *testing.T, ns, release string, want ...string) {
	t.Helper()
	testenv.Eventually(t, fmt.Sprintf("release %s revisions %v", release, want), func() error {
		revs, err := revisions(ns, release)
		if err != nil {
			return err
		}
		if !slices.Equal(revs, want) {
			return fmt.Errorf("revisions %v", revs)
		}
		return nil
	})
}

func setDeploymentStatus(t *testing.T, dep *appsv1.Deployment, replicas, ready int32) {
	t.Helper()
	testenv.Eventually(t, "Deployment status written", func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(dep), dep); err != nil {
			return err
		}
		available := corev1.ConditionFalse
		if ready == replicas {
			available = corev1.ConditionTrue
		}
		dep.Status = appsv1.DeploymentStatus{
			ObservedGeneration: dep.Generation, Replicas: replicas, UpdatedReplicas: replicas,
			ReadyReplicas: ready, AvailableReplicas: ready,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: available, Reason: "Test"},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
			},
		}
		return k8s.Status().Update(ctx, dep)
	})
}

func ptr[T any](v T) *T { return &v }

func TestReconciler_HonoursTheWatchSelector(t *testing.T) {
	ns := namespace(t)
	g := testenv.NewObject(gadgetGVK, ns, "ignored", map[string]any{"message": "hi"})
	g.SetLabels(map[string]string{"rudder.test/ignore": "yes"})
	if err := k8s.Create(ctx, g); err != nil {
		t.Fatal(err)
	}
	// A resource the selector does not match is never touched: give rudder
	// time to do something wrong, then check it did nothing. The control,
	// created after it, is the positive signal that rudder handled the
	// events of that time.
	if err := k8s.Create(ctx, testenv.NewObject(gadgetGVK, ns, "control", map[string]any{"message": "hi"})); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "gadget-control", "1:deployed")
	time.Sleep(2 * time.Second)
	if cr := get(t, gadgetGVK, ns, "ignored"); len(cr.GetFinalizers()) != 0 || cr.Object["status"] != nil {
		t.Errorf("a resource outside the selector was reconciled: finalizers %v, status %v", cr.GetFinalizers(), cr.Object["status"])
	}
	waitRevisions(t, ns, "gadget-ignored")

	patch := []byte(`{"metadata":{"labels":{"rudder.test/ignore":null}}}`)
	if err := k8s.Patch(ctx, get(t, gadgetGVK, ns, "ignored"), client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "gadget-ignored", "1:deployed")
}

func TestReconciler_PauseAndResume(t *testing.T) {
	ns := namespace(t)
	if err := k8s.Create(ctx, testenv.NewObject(webappGVK, ns, "nap", webappSpec(1, "nginx:1.25"))); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "webapp-nap", "1:deployed")
	// The install's status written: storage shows the revision first.
	conditionSays(t, webappGVK, ns, "nap", status.ConditionReleased, metav1.ConditionTrue, status.ReasonInstallSucceeded)
	patch := []byte(`{"metadata":{"annotations":{"rudder.dev/paused":"true"}},"spec":{"replicas":3}}`)
	if err := k8s.Patch(ctx, get(t, webappGVK, ns, "nap"), client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "Paused condition", func() error {
		return conditionIs(get(t, webappGVK, ns, "nap"), "Paused", metav1.ConditionTrue, "Paused")
	})
	// Paused: no upgrade, and drift stays.
	key := client.ObjectKey{Namespace: ns, Name: "nap"}
	var svc corev1.Service
	if err := k8s.Get(ctx, key, &svc); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(ctx, &svc); err != nil {
		t.Fatal(err)
	}
	// The reconcile the deletion brings ran, and saw the Service missing
	// without putting it back.
	testenv.Eventually(t, "Ready says the Service is missing", func() error {
		c := testenv.Condition(get(t, webappGVK, ns, "nap"), "Ready")
		if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "Service/nap does not exist yet") {
			return fmt.Errorf("Ready = %+v", c)
		}
		// Paused with a spec change waiting: Ready is of generation 1 still.
		if c.ObservedGeneration != 1 {
			return fmt.Errorf("Ready observedGeneration %d, want 1 (the generation acted on)", c.ObservedGeneration)
		}
		return nil
	})
	waitRevisions(t, ns, "webapp-nap", "1:deployed")
	if err := k8s.Get(ctx, key, &corev1.Service{}); !apierrors.IsNotFound(err) {
		t.Errorf("a paused release was repaired (err %v)", err)
	}

	patch = []byte(`{"metadata":{"annotations":{"rudder.dev/paused":null}}}`)
	if err := k8s.Patch(ctx, get(t, webappGVK, ns, "nap"), client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "webapp-nap", "1:superseded", "2:deployed")
	testenv.Eventually(t, "resumed: Service back, condition gone", func() error {
		if err := k8s.Get(ctx, key, &corev1.Service{}); err != nil {
			return err
		}
		if c := testenv.Condition(get(t, webappGVK, ns, "nap"), "Paused"); c != nil {
			return fmt.Errorf("Paused condition still there: %+v", c)
		}
		return nil
	})
}

func TestReconciler_HistoryIsBoundedByMaxHistory(t *testing.T) {
	ns := namespace(t)
	if err := k8s.Create(ctx, testenv.NewObject(webappGVK, ns, "hist", webappSpec(1, "nginx:1.25"))); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "webapp-hist", "1:deployed")
	for replicas := 2; replicas <= 5; replicas++ {
		patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
		if err := k8s.Patch(ctx, get(t, webappGVK, ns, "hist"), client.RawPatch("application/merge-patch+json", patch)); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, fmt.Sprintf("revision %d deployed", replicas), func() error {
			revs, err := revisions(ns, "webapp-hist")
			if err != nil || !slices.Contains(revs, fmt.Sprintf("%d:deployed", replicas)) {
				return fmt.Errorf("revisions %v (err %w)", revs, err)
			}
			return nil
		})
	}
	// The test WebApp kind has maxHistory 3: Helm's storage and status agree.
	waitRevisions(t, ns, "webapp-hist", "3:superseded", "4:superseded", "5:deployed")
	testenv.Eventually(t, "status.history", func() error {
		hist, _, _ := unstructured.NestedSlice(get(t, webappGVK, ns, "hist").Object, "status", "history")
		var got []string
		for _, h := range hist {
			e := h.(map[string]any)
			got = append(got, fmt.Sprintf("%v:%v:%v", e["revision"], e["status"], e["description"]))
		}
		want := []string{"5:deployed:Upgrade complete", "4:superseded:Upgrade complete", "3:superseded:Upgrade complete"}
		if !slices.Equal(got, want) {
			return fmt.Errorf("history %v, want %v", got, want)
		}
		return nil
	})
}

func TestReconciler_RollbackToARevisionHoldsUntilTheSpecChanges(t *testing.T) {
	ns := namespace(t)
	if err := k8s.Create(ctx, testenv.NewObject(webappGVK, ns, "back", webappSpec(1, "nginx:1.25"))); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "webapp-back", "1:deployed")
	setReplicas := func(n int) {
		t.Helper()
		patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, n))
		if err := k8s.Patch(ctx, get(t, webappGVK, ns, "back"), client.RawPatch("application/merge-patch+json", patch)); err != nil {
			t.Fatal(err)
		}
	}
	setReplicas(2)
	waitRevisions(t, ns, "webapp-back", "1:superseded", "2:deployed")
	setReplicas(3)
	waitRevisions(t, ns, "webapp-back", "1:superseded", "2:superseded", "3:deployed")

	ann := []byte(`{"metadata":{"annotations":{"rudder.dev/rollback-to":"1"}}}`)
	if err := k8s.Patch(ctx, get(t, webappGVK, ns, "back"), client.RawPatch("application/merge-patch+json", ann)); err != nil {
		t.Fatal(err)
	}
	// maxHistory 3 prunes revision 1 once revision 4 exists.
	waitRevisions(t, ns, "webapp-back", "2:superseded", "3:superseded", "4:deployed")
	deploymentReplicas := func(want int32) func() error {
		return func() error {
			var dep appsv1.Deployment
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "back"}, &dep); err != nil {
				return err
			}
			if *dep.Spec.Replicas != want {
				return fmt.Errorf("Deployment replicas %d, want %d", *dep.Spec.Replicas, want)
			}
			return nil
		}
	}
	testenv.Eventually(t, "the Deployment as revision 1 had it", deploymentReplicas(1))
	testenv.Eventually(t, "status says it is held", func() error {
		return conditionIs(get(t, webappGVK, ns, "back"), "Released", metav1.ConditionTrue, status.ReasonRolledBack)
	})
	time.Sleep(2 * time.Second)          // rudder must not upgrade back to the spec,
	reconciled(t, webappGVK, ns, "back") // even when it looks again
	waitRevisions(t, ns, "webapp-back", "2:superseded", "3:superseded", "4:deployed")

	// A spec change ends the rollback: the annotation goes and the spec is deployed.
	setReplicas(5)
	waitRevisions(t, ns, "webapp-back", "3:superseded", "4:superseded", "5:deployed")
	testenv.Eventually(t, "the new spec deployed", deploymentReplicas(5))
	if _, ok := get(t, webappGVK, ns, "back").GetAnnotations()[status.AnnotationRollbackTo]; ok {
		t.Error("the rollback annotation is still there after the spec changed")
	}
}
