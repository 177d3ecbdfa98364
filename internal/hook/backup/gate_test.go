package backup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/hook"
)

// statefulSet is the deployed revision's StatefulSet of a Database running
// postgres version.
func statefulSet(version string) []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "orders"}}},
		{Object: map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": map[string]any{"name": "orders"},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "postgres", "image": "postgres:" + version},
				map[string]any{"name": "postgres-exporter", "image": "quay.io/prometheuscommunity/postgres-exporter:v0.15.0"},
			}}}}}},
	}
}

func TestGate_BacksUpBeforeAVersionChange(t *testing.T) {
	ctx := context.Background()
	k8s := kube(t)
	h := &Hook{Client: k8s, Reader: k8s}
	db := newDatabase(t, k8s, dbSpec(true, "0 2 * * *"))
	toMinor := dbSpec(true, "0 2 * * *")
	toMinor["version"] = "16.4"
	gate := func(deployed string, vals map[string]any) hook.GateResult {
		t.Helper()
		res, err := h.BeforeUpgrade(ctx, db, statefulSet(deployed), vals)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	jobs := func() []batchv1.Job {
		t.Helper()
		var list batchv1.JobList
		if err := k8s.List(ctx, &list, client.InNamespace(db.GetNamespace())); err != nil {
			t.Fatal(err)
		}
		return list.Items
	}

	if res := gate("16", dbSpec(true, "0 2 * * *")); !res.Open {
		t.Errorf("same version: gate %+v, want open", res)
	}
	off := dbSpec(false, "")
	off["version"] = "16.4"
	if res := gate("16", off); !res.Open || len(jobs()) != 0 {
		t.Errorf("backups disabled: gate %+v with %d Jobs, want open and none", res, len(jobs()))
	}

	res := gate("16", toMinor)
	if res.Open || res.Reason != ReasonBackingUp || res.RequeueAfter == 0 || !strings.Contains(res.Message, "16 → 16.4") {
		t.Fatalf("version 16 → 16.4: gate %+v, want closed while a backup runs", res)
	}
	gate("16", toMinor) // asked again: the same Job
	js := jobs()
	if len(js) != 1 || js[0].Labels[LabelBackupOf] != "orders" || !strings.Contains(res.Message, js[0].Name) {
		t.Fatalf("Jobs %v, want one backup Job of orders, named in %q", js, res.Message)
	}

	finish(t, k8s, &js[0], false, time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC))
	res = gate("16", toMinor)
	if res.Open || !res.Failed || res.Reason != ReasonBackupFailed ||
		!strings.Contains(res.Message, "kubectl logs job/"+js[0].Name) || !strings.Contains(res.Message, AnnotationUpgradeWithoutBackup+"=16.4") {
		t.Errorf("backup failed: gate %+v, want closed for good, saying how to go on", res)
	}
	db.SetAnnotations(map[string]string{AnnotationUpgradeWithoutBackup: "16.4"})
	if res := gate("16", toMinor); !res.Open {
		t.Errorf("annotated to upgrade to 16.4 without a backup: gate %+v, want open", res)
	}
	toNext := dbSpec(true, "0 2 * * *")
	toNext["version"] = "16.5"
	if res := gate("16.4", toNext); res.Open {
		t.Errorf("the annotation names 16.4, the upgrade is to 16.5: gate open, want closed")
	}

	// A Job that completes opens the gate.
	db.SetAnnotations(nil)
	var next batchv1.Job
	for _, j := range jobs() {
		if j.Annotations[annotationBeforeUpgrade] == "16.4 → 16.5" {
			next = j
		}
	}
	finish(t, k8s, &next, true, time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC))
	if res := gate("16.4", toNext); !res.Open {
		t.Errorf("backup before 16.4 → 16.5 completed: gate %+v, want open", res)
	}
}

// TestGate_LeavesOthersJobAlone: a Job under the name of the backup before an
// upgrade that is not the Database's holds the upgrade, named, and is not
// taken for that backup however it ended.
func TestGate_LeavesOthersJobAlone(t *testing.T) {
	ctx := context.Background()
	k8s := kube(t)
	h := &Hook{Client: k8s, Reader: k8s}
	db := newDatabase(t, k8s, dbSpec(true, "0 2 * * *"))
	toMinor := dbSpec(true, "0 2 * * *")
	toMinor["version"] = "16.4"
	sum := sha256.Sum256([]byte(string(db.GetUID()) + "/16 → 16.4"))
	other := unrelatedJob(db.GetNamespace(), "orders-pre-"+hex.EncodeToString(sum[:])[:8])
	if err := k8s.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	finish(t, k8s, other, true, time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC))
	res, err := h.BeforeUpgrade(ctx, db, statefulSet("16"), toMinor)
	if err != nil {
		t.Fatal(err)
	}
	if res.Open || res.Reason != hook.ReasonObjectNotOwned || !strings.Contains(res.Message, "Job "+other.Name) {
		t.Errorf("gate %+v, want closed, ObjectNotOwned naming Job %s", res, other.Name)
	}
}
