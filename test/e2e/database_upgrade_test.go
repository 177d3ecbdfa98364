//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Issue 14, a Database upgrade guarded by a fresh backup: with backups
// enabled, a new spec.version first runs a backup Job; while it runs (held
// here by a quota on its pod) the release stays on the old version and
// Released says why, naming the Job; once it completes the upgrade goes
// ahead. The annotation rudder.dev/upgrade-without-backup lets the next
// version through without one.
func TestDatabase_UpgradeWaitsForABackup(t *testing.T) {
	t.Parallel() // its own namespace
	const ns = "db-upgrade"
	createNamespace(t, ns)
	db := &nsDatabase{t: t, ns: ns, name: "up-db"}
	db.create(map[string]any{"version": "16", "storageSize": "1Gi", "database": "orders", "resources": notBestEffort,
		"backup": map[string]any{"enabled": true, "schedule": "0 2 1 1 *", "storageSize": "1Gi"}})
	db.waitReady(metav1.ConditionTrue, "Ready")

	holdJobs(t, ns)
	kubectl(t, "patch", "database", db.name, "-n", ns, "--type", "merge", "-p", `{"spec":{"version":"16.4"}}`)
	job := waitJob(t, ns, "the backup Job before the upgrade to 16.4", func(j *batchv1.Job) bool {
		return j.Annotations["rudder.dev/before-upgrade"] == "16 → 16.4"
	})
	waitConditionOf(t, "database", ns, db.name, "Released", metav1.ConditionUnknown, "BackingUpBeforeUpgrade", "Job "+job.Name, "16 → 16.4")
	time.Sleep(5 * time.Second) // the upgrade must still wait
	db.checkSteady(1)
	checkImage(t, ns, db.name, "postgres:16")

	releaseJobs(t, ns)
	eventuallyWithin(t, 3*time.Minute, "Database "+db.name+" upgraded to 16.4 after its backup", func() error {
		if revs := db.mustHistory(); len(revs) != 2 || revs[1].Status != "deployed" {
			return fmt.Errorf("history %s", toJSON(revs))
		}
		return nil
	})
	checkImage(t, ns, db.name, "postgres:16.4")

	kubectl(t, "annotate", "database", db.name, "-n", ns, "rudder.dev/upgrade-without-backup=16.5")
	kubectl(t, "patch", "database", db.name, "-n", ns, "--type", "merge", "-p", `{"spec":{"version":"16.5"}}`)
	eventuallyWithin(t, 3*time.Minute, "Database "+db.name+" upgraded to 16.5 without a backup", func() error {
		if revs := db.mustHistory(); len(revs) != 3 || revs[2].Status != "deployed" {
			return fmt.Errorf("history %s", toJSON(revs))
		}
		return nil
	})
	var jobs batchv1.JobList
	mustGetJSON(t, &jobs, "jobs", "-n", ns)
	for _, j := range jobs.Items {
		if j.Annotations["rudder.dev/before-upgrade"] == "16.4 → 16.5" {
			t.Errorf("Job %s backed up before 16.4 → 16.5, which the annotation lets through without one", j.Name)
		}
	}
}

// checkImage fails the test unless StatefulSet ns/name runs image.
func checkImage(t *testing.T, ns, name, image string) {
	t.Helper()
	var sts appsv1.StatefulSet
	mustGetJSON(t, &sts, "statefulset", name, "-n", ns)
	if got := sts.Spec.Template.Spec.Containers[0].Image; got != image {
		t.Errorf("StatefulSet %s/%s runs %s, want %s", ns, name, got, image)
	}
}
