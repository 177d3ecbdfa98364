package volume

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/test/testenv"
)

var k8s client.Client

func TestMain(m *testing.M) {
	if testenv.FuzzOnly() {
		os.Exit(m.Run()) // the fuzz targets read specs: they need no server
	}
	env, cfg, err := testenv.Start()
	if err != nil {
		panic(err)
	}
	k8s, err = client.New(cfg, client.Options{Scheme: scheme.Scheme})
	code := 1
	if err == nil {
		code = m.Run()
	}
	_ = env.Stop()
	os.Exit(code)
}

// boundClaim makes the claim name of size, bound to a volume of
// StorageClass class, as the StatefulSet or the backup hook and the
// provisioner leave it, with annotations.
func boundClaim(t *testing.T, ns, name, class, size string, annotations map[string]string) *corev1.PersistentVolumeClaim {
	t.Helper()
	ctx := context.Background()
	q := resource.MustParse(size)
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: q},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + name}},
			StorageClassName:              class,
			ClaimRef:                      &corev1.ObjectReference{Namespace: ns, Name: name},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
		},
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q}},
			StorageClassName: ptr.To(class),
			VolumeName:       pv.Name,
		},
	}
	for _, o := range []client.Object{pv, pvc} {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{corev1.ResourceStorage: q},
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}}
	if err := k8s.Status().Update(ctx, pvc); err != nil {
		t.Fatal(err)
	}
	return pvc
}

func storageClass(t *testing.T, name string, expandable bool) {
	t.Helper()
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "example.com/disk",
		AllowVolumeExpansion: ptr.To(expandable)}
	if err := k8s.Create(context.Background(), sc); err != nil {
		t.Fatal(err)
	}
}

func database(t *testing.T, size string) *unstructured.Unstructured {
	t.Helper()
	ns := testenv.Namespace(t, k8s, "vol-")
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"storageSize": size}}}
	u.SetKind("Database")
	u.SetNamespace(ns)
	u.SetName("orders")
	u.SetUID(types.UID("uid-" + ns))
	return u
}

func TestHook_GrowsTheDataClaim(t *testing.T) {
	ctx := context.Background()
	storageClass(t, "expandable", true)
	h := &Hook{Client: k8s, Reader: k8s}
	db := database(t, "1Gi")

	res, err := h.Reconcile(ctx, db, db.Object["spec"].(map[string]any))
	if err != nil || res.Condition.Reason != "NoClaimYet" || res.Condition.Status != metav1.ConditionUnknown {
		t.Fatalf("before the claim exists: %+v, %v; want Unknown NoClaimYet", res.Condition, err)
	}

	boundClaim(t, db.GetNamespace(), "data-orders-0", "expandable", "1Gi", nil)
	res, err = h.Reconcile(ctx, db, db.Object["spec"].(map[string]any))
	if err != nil || res.Condition.Status != metav1.ConditionTrue || res.Condition.Reason != "Sized" {
		t.Fatalf("claim of the spec's size: %+v, %v; want True Sized", res.Condition, err)
	}

	db.Object["spec"] = map[string]any{"storageSize": "5Gi"}
	res, err = h.Reconcile(ctx, db, db.Object["spec"].(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	if res.Condition.Status != metav1.ConditionFalse || res.Condition.Reason != "Resizing" ||
		!strings.Contains(res.Condition.Message, "from 1Gi to 5Gi") || res.RequeueAfter == 0 || res.BlocksReady {
		t.Errorf("after storageSize grew: %+v (requeue %s, blocks %v); want False Resizing from 1Gi to 5Gi, polled, not blocking",
			res.Condition, res.RequeueAfter, res.BlocksReady)
	}
	var pvc corev1.PersistentVolumeClaim
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: db.GetNamespace(), Name: "data-orders-0"}, &pvc); err != nil {
		t.Fatal(err)
	}
	if got := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; got.String() != "5Gi" {
		t.Errorf("claim requests %s, want 5Gi", got.String())
	}
	if got := pvc.Annotations[hook.AnnotationGeneratedFor]; got != hook.GeneratedFor(db) {
		t.Errorf("claim the StatefulSet made is recorded for %q, want %s", got, hook.GeneratedFor(db))
	}

	// The storage provider expanded the volume.
	pvc.Status.Capacity[corev1.ResourceStorage] = resource.MustParse("5Gi")
	if err := k8s.Status().Update(ctx, &pvc); err != nil {
		t.Fatal(err)
	}
	res, err = h.Reconcile(ctx, db, db.Object["spec"].(map[string]any))
	if err != nil || res.Condition.Status != metav1.ConditionTrue || !strings.Contains(res.Condition.Message, "has 5Gi") {
		t.Errorf("after the expansion: %+v, %v; want True, 5Gi", res.Condition, err)
	}
}

func TestHook_ReportsARefusedExpansion(t *testing.T) {
	ctx := context.Background()
	storageClass(t, "fixed", false)
	h := &Hook{Client: k8s, Reader: k8s}
	db := database(t, "2Gi")
	boundClaim(t, db.GetNamespace(), "data-orders-0", "fixed", "1Gi", nil)

	res, err := h.Reconcile(ctx, db, db.Object["spec"].(map[string]any))
	if err != nil {
		t.Fatalf("a refused expansion is reported, not retried as an error: %v", err)
	}
	if res.Condition.Status != metav1.ConditionFalse || res.Condition.Reason != "ExpansionRefused" ||
		!strings.Contains(res.Condition.Message, "allowVolumeExpansion") || res.BlocksReady {
		t.Errorf("condition %+v (blocks %v); want False ExpansionRefused naming allowVolumeExpansion, not blocking", res.Condition, res.BlocksReady)
	}
}

func TestHook_GrowsTheBackupClaimToo(t *testing.T) {
	ctx := context.Background()
	storageClass(t, "expandable-backups", true)
	h := &Hook{Client: k8s, Reader: k8s}
	db := database(t, "1Gi")
	db.Object["spec"] = map[string]any{"storageSize": "1Gi", "backup": map[string]any{"storageSize": "3Gi"}}
	boundClaim(t, db.GetNamespace(), "data-orders-0", "expandable-backups", "1Gi", nil)
	boundClaim(t, db.GetNamespace(), "orders-backup", "expandable-backups", "2Gi", map[string]string{hook.AnnotationGeneratedFor: "Database/orders"})

	res, err := h.Reconcile(ctx, db, db.Object["spec"].(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	if res.Condition.Reason != "Resizing" || !strings.Contains(res.Condition.Message, "orders-backup is being expanded from 2Gi to 3Gi") ||
		!strings.Contains(res.Condition.Message, "data-orders-0 has 1Gi") {
		t.Errorf("condition %+v; want Resizing naming both claims", res.Condition)
	}
	var pvc corev1.PersistentVolumeClaim
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: db.GetNamespace(), Name: "orders-backup"}, &pvc); err != nil {
		t.Fatal(err)
	}
	if got := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; got.String() != "3Gi" {
		t.Errorf("backup claim requests %s, want 3Gi", got.String())
	}
}

// TestHook_LeavesOthersClaimsAlone: a claim under the data or backup claim's
// name that is not the Database's — there before it, or made for another
// Database — is neither resized nor recorded as the Database's; the
// condition names it.
func TestHook_LeavesOthersClaimsAlone(t *testing.T) {
	ctx := context.Background()
	storageClass(t, "expandable-others", true)
	tests := []struct {
		name        string
		claim       string
		annotations map[string]string
		createdLate bool // the Database was created after the claim
	}{
		{name: "a data claim from before the Database", claim: "data-orders-0", createdLate: true},
		{name: "a data claim made for another Database", claim: "data-orders-0",
			annotations: map[string]string{hook.AnnotationGeneratedFor: "Database/other"}},
		{name: "a backup claim the backup hook did not make", claim: "orders-backup"},
		{name: "a backup claim made for another Database", claim: "orders-backup",
			annotations: map[string]string{hook.AnnotationGeneratedFor: "Database/other"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &Hook{Client: k8s, Reader: k8s}
			db := database(t, "3Gi")
			spec := map[string]any{"storageSize": "3Gi", "backup": map[string]any{"storageSize": "3Gi"}}
			pvc := boundClaim(t, db.GetNamespace(), tt.claim, "expandable-others", "1Gi", tt.annotations)
			if tt.createdLate {
				db.SetCreationTimestamp(metav1.NewTime(pvc.CreationTimestamp.Add(time.Minute)))
			}
			res, err := h.Reconcile(ctx, db, spec)
			if err != nil {
				t.Fatal(err)
			}
			c := res.Condition
			if c.Status != metav1.ConditionFalse || c.Reason != hook.ReasonObjectNotOwned ||
				!strings.Contains(c.Message, "PersistentVolumeClaim "+tt.claim+" exists but was not made by rudder for Database orders") ||
				!strings.Contains(c.Message, hook.AnnotationGeneratedFor+"=Database/orders") {
				t.Errorf("condition %+v, want False ObjectNotOwned naming %s and how to hand it over", c, tt.claim)
			}
			var after corev1.PersistentVolumeClaim
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(pvc), &after); err != nil {
				t.Fatal(err)
			}
			if after.ResourceVersion != pvc.ResourceVersion {
				t.Errorf("claim %s was changed: requests %v, annotations %v", tt.claim, after.Spec.Resources.Requests, after.Annotations)
			}
		})
	}
}

// A data claim kept from an earlier Database of the same name is not this
// one's: the hook neither resizes nor records it, and holds the release back,
// whose StatefulSet would start on that data, until whoever may edit the
// claim hands it over.
func TestHook_HoldsTheReleaseOnAnotherDatabasesData(t *testing.T) {
	ctx := context.Background()
	storageClass(t, "kept", true)
	h := &Hook{Client: k8s, Reader: k8s}
	db := database(t, "5Gi")
	earlier := map[string]string{hook.AnnotationGeneratedFor: "Database/orders/uid-of-an-earlier-life"}
	boundClaim(t, db.GetNamespace(), "data-orders-0", "kept", "1Gi", earlier)
	db.SetCreationTimestamp(metav1.Now())

	res, err := h.Reconcile(ctx, db, db.Object["spec"].(map[string]any))
	if err != nil || !res.BlocksRelease || res.Condition.Status != metav1.ConditionFalse || res.Condition.Reason != hook.ReasonObjectNotOwned ||
		!strings.Contains(res.Condition.Message, "kubectl annotate persistentvolumeclaim data-orders-0 "+hook.AnnotationGeneratedFor+"="+hook.GeneratedFor(db)) {
		t.Fatalf("another Database's claim: %+v (blocks the release %v), %v; want False ObjectNotOwned, blocking, saying how to hand it over",
			res.Condition, res.BlocksRelease, err)
	}
	var pvc corev1.PersistentVolumeClaim
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: db.GetNamespace(), Name: "data-orders-0"}, &pvc); err != nil {
		t.Fatal(err)
	}
	if got := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; got.String() != "1Gi" || pvc.Annotations[hook.AnnotationGeneratedFor] != earlier[hook.AnnotationGeneratedFor] {
		t.Errorf("the earlier Database's claim was changed: requests %s, annotations %v", got.String(), pvc.Annotations)
	}

	// Handed over by someone who may edit claims: this Database's now.
	patch := client.MergeFrom(pvc.DeepCopy())
	pvc.Annotations[hook.AnnotationGeneratedFor] = hook.GeneratedFor(db)
	if err := k8s.Patch(ctx, &pvc, patch); err != nil {
		t.Fatal(err)
	}
	res, err = h.Reconcile(ctx, db, db.Object["spec"].(map[string]any))
	if err != nil || res.BlocksRelease || res.Condition.Reason == hook.ReasonObjectNotOwned {
		t.Fatalf("after the hand-over: %+v (blocks the release %v), %v; want it resized, not blocking", res.Condition, res.BlocksRelease, err)
	}
}
