//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The seed-like Database sample and a Database restored from it.
const (
	databaseSample = "config/samples/database_v1_database.yaml"
	sourceDB       = "my-database"
	copyDB         = "my-database-copy"
)

// copyManifest is a Database created from the latest backup of sourceDB.
const copyManifest = `apiVersion: database.my.domain/v1
kind: Database
metadata:
  name: ` + copyDB + `
  namespace: default
spec:
  version: "16"
  storageSize: 1Gi
  database: orders
  restore:
    from: ` + sourceDB + `
`

// database is the part of a Database custom resource the tests read.
type database struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     map[string]any    `json:"spec"`
	Status   struct {
		ObservedGeneration int64              `json:"observedGeneration"`
		Phase              string             `json:"phase"`
		ReadyReplicas      int32              `json:"readyReplicas"`
		CurrentReplicas    int32              `json:"currentReplicas"`
		CurrentVersion     string             `json:"currentVersion"`
		LastBackup         string             `json:"lastBackup"`
		Release            *releaseStatus     `json:"release"`
		Conditions         []metav1.Condition `json:"conditions"`
		Restore            map[string]string  `json:"restore"`
	} `json:"status"`
}

// TestDatabase_Lifecycle is issue 4's promise on a real API server with
// real controllers (StatefulSet, CronJob, Job, PersistentVolume binding by
// the hostPath provisioner); kwok stands in for the kubelet, so containers
// never run: the scripts themselves are tested against PostgreSQL in
// internal/hook/backup.
func TestDatabase_Lifecycle(t *testing.T) {
	t.Parallel() // its own names in the default namespace (the sample's); never restarts the manager or the cluster
	// The copy first: its restore Job's pod keeps the source's backup claim in use.
	startCleanDatabases(t, copyDB, sourceDB)

	seed(t, "kubectl apply -f "+databaseSample)
	db := waitDatabaseReady(t, sourceDB, "16")
	if db.Status.Release == nil || db.Status.Release.Name != "database-"+sourceDB {
		t.Errorf("status.release = %+v, want release database-%s", db.Status.Release, sourceDB)
	}
	header, row := tableRow(t, kubectl(t, "get", "database", sourceDB, "-n", namespace), sourceDB)
	checkHeader(t, header, "NAME", "VERSION", "READY", "PHASE", "LAST", "BACKUP", "AGE")
	if row[1] != "16" || row[2] != "1" || row[3] != phaseRunning {
		t.Errorf("kubectl get database: row %q, want version 16, 1 ready, %s", row, phaseRunning)
	}

	t.Log("the credentials Secret is generated once and never changes")
	secret := credentials(t, sourceDB)
	for _, key := range []string{"username", "password", "host", "port", "database", "uri"} {
		if len(secret.Data[key]) == 0 {
			t.Errorf("Secret %s-credentials: key %q is missing or empty", sourceDB, key)
		}
	}
	if n := len(secret.Data["password"]); n < 32 {
		t.Errorf("generated password has %d characters, want at least 32", n)
	}
	kubectl(t, "patch", "database", sourceDB, "-n", namespace, "--type", "merge",
		"-p", `{"spec":{"resources":{"limits":{"memory":"2Gi"}}}}`)
	db = waitDatabaseReady(t, sourceDB, "16")
	if db.Status.Release.Revision != 2 {
		t.Errorf("after a spec edit: revision %d, want 2", db.Status.Release.Revision)
	}
	if after := credentials(t, sourceDB); string(after.Data["password"]) != string(secret.Data["password"]) ||
		after.ResourceVersion != secret.ResourceVersion {
		t.Error("the spec edit changed the credentials Secret")
	}

	t.Log("the CronJob spawns a backup Job that completes; lastBackup follows")
	kubectl(t, "patch", "database", sourceDB, "-n", namespace, "--type", "merge",
		"-p", `{"spec":{"backup":{"schedule":"* * * * *"}}}`)
	eventuallyWithin(t, 3*time.Minute, "a backup Job of CronJob "+sourceDB+"-backup to complete", func() error {
		return cronJobSpawnedCompleteJob(sourceDB + "-backup")
	})
	waitDatabase(t, sourceDB, "lastBackup set and BackedUp True", func(db *database) error {
		c := condition(db.Status.Conditions, "BackedUp")
		if db.Status.LastBackup == "" || c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("lastBackup %q, BackedUp %+v", db.Status.LastBackup, c)
		}
		return nil
	})
	// NAME VERSION READY PHASE LAST-BACKUP AGE: the column shows the backup's age.
	if _, row := tableRow(t, kubectl(t, "get", "database", sourceDB, "-n", namespace), sourceDB); len(row) != 6 || strings.HasPrefix(row[4], "<") {
		t.Errorf("kubectl get database: row %q, want the Last Backup column filled", row)
	}

	t.Log("a second Database restores from the first before it is Ready")
	apply(t, copyManifest)
	copyDBState := waitDatabaseReady(t, copyDB, "16")
	if r := copyDBState.Status.Restore; r["phase"] != "Succeeded" || r["source"] != sourceDB || r["completed"] == "" {
		t.Errorf("status.restore = %v, want Succeeded from %s with a completion time", r, sourceDB)
	}
	var restoreJob batchv1.Job
	mustGetJSON(t, &restoreJob, "job", copyDB+"-restore", "-n", namespace)
	if v := restoreJob.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim; v == nil || v.ClaimName != sourceDB+"-backup" || !v.ReadOnly {
		t.Errorf("restore Job volume = %+v, want %s-backup read-only", v, sourceDB)
	}
	if restoreJob.Status.Succeeded != 1 {
		t.Errorf("restore Job: %d succeeded pods, want 1", restoreJob.Status.Succeeded)
	}
	restored := claimOf(t, "data-"+copyDB+"-0")
	if !strings.HasPrefix(restored.Annotations["rudder.dev/restored-from"], sourceDB+"/") {
		t.Errorf("claim data-%s-0 annotations %v, want rudder.dev/restored-from %s/…", copyDB, restored.Annotations, sourceDB)
	}

	t.Log("delete keeps the data and the credentials; a new Database of that name reattaches once they are handed over")
	dataBefore, backupsBefore := claimOf(t, "data-"+sourceDB+"-0"), claimOf(t, sourceDB+"-backup")
	kubectl(t, "delete", "database", sourceDB, "-n", namespace, "--wait=true", "--timeout=2m")
	eventually(t, "release database-"+sourceDB+" to be uninstalled", func() error {
		if helmRelease(t, "database-"+sourceDB) != nil {
			return errors.New("helm list still shows it")
		}
		return nil
	})
	for _, kept := range []string{"pvc/data-" + sourceDB + "-0", "pvc/" + sourceDB + "-backup", "secret/" + sourceDB + "-credentials"} {
		if out, err := run("kubectl", "get", kept, "-n", namespace, "-o", "name"); err != nil || strings.TrimSpace(out) == "" {
			t.Errorf("after delete (deletionPolicy Retain): %s is gone (%v)", kept, err)
		}
	}
	seed(t, "kubectl apply -f "+databaseSample)
	// Another Database of the name: it does not start on the earlier one's
	// data until someone who may edit claims hands them over.
	eventually(t, "the new Database holding back on the kept data claim", func() error {
		return conditionIs("database", namespace, sourceDB, "StorageSized", metav1.ConditionFalse, []string{"ObjectNotOwned"}, "data-"+sourceDB+"-0", "kubectl annotate")
	})
	if out, err := run("kubectl", "get", "statefulset", sourceDB, "-n", namespace, "-o", "name"); err == nil && strings.TrimSpace(out) != "" {
		t.Errorf("the new Database started on the earlier one's data: %s", out)
	}
	var again database
	mustGetJSON(t, &again, "database", sourceDB, "-n", namespace)
	for _, claim := range []string{"data-" + sourceDB + "-0", sourceDB + "-backup"} {
		kubectl(t, "annotate", "pvc", claim, "-n", namespace, "--overwrite",
			"rudder.dev/generated-for=Database/"+sourceDB+"/"+string(again.Metadata.UID))
	}
	waitDatabaseReady(t, sourceDB, "16")
	if after := credentials(t, sourceDB); after.UID != secret.UID || string(after.Data["password"]) != string(secret.Data["password"]) {
		t.Error("the re-created Database has other credentials than before")
	}
	if c := claimOf(t, "data-"+sourceDB+"-0"); c.UID != dataBefore.UID {
		t.Error("the re-created Database has a new data claim: the old data was not reattached")
	}
	if c := claimOf(t, sourceDB+"-backup"); c.UID != backupsBefore.UID {
		t.Error("the re-created Database has a new backup claim")
	}
}

// waitDatabaseReady waits until Database name is Running for its generation
// with Ready True and one ready pod of version.
func waitDatabaseReady(t *testing.T, name, version string) *database {
	t.Helper()
	return waitDatabase(t, name, "Running and Ready with version "+version, func(db *database) error {
		gen, st := db.Metadata.Generation, db.Status
		ready := condition(st.Conditions, "Ready")
		switch {
		case st.ObservedGeneration != gen:
			return fmt.Errorf("observedGeneration %d, generation %d", st.ObservedGeneration, gen)
		case ready == nil || ready.Status != metav1.ConditionTrue || ready.ObservedGeneration != gen:
			return fmt.Errorf("Ready is %+v", ready)
		case st.Phase != phaseRunning || st.ReadyReplicas != 1 || st.CurrentVersion != version:
			return fmt.Errorf("phase %q, readyReplicas %d, currentVersion %q", st.Phase, st.ReadyReplicas, st.CurrentVersion)
		}
		return nil
	})
}

// waitDatabase waits until check passes on Database name.
func waitDatabase(t *testing.T, name, what string, check func(*database) error) *database {
	t.Helper()
	var db database
	eventuallyWithin(t, 3*time.Minute, "Database "+name+": "+what, func() error {
		db = database{}
		found, err := getJSON(&db, "database", name, "-n", namespace)
		if err != nil {
			return fmt.Errorf("getting Database %s: %w", name, err)
		}
		if !found {
			return fmt.Errorf("expected Database %s to exist, saw NotFound", name)
		}
		if err := check(&db); err != nil {
			return fmt.Errorf("%w; conditions %s", err, toJSON(db.Status.Conditions))
		}
		return nil
	})
	return &db
}

// cronJobSpawnedCompleteJob says whether a Job the CronJob itself created
// (owned by it, not requested by annotation) has completed.
func cronJobSpawnedCompleteJob(cronJob string) error {
	var jobs batchv1.JobList
	if _, err := getJSON(&jobs, "jobs", "-n", namespace); err != nil {
		return err
	}
	var seen []string
	for _, j := range jobs.Items {
		for _, o := range j.OwnerReferences {
			if o.Kind != "CronJob" || o.Name != cronJob {
				continue
			}
			if j.Status.Succeeded > 0 {
				return nil
			}
			seen = append(seen, j.Name)
		}
	}
	return fmt.Errorf("no complete Job of CronJob %s; its unfinished Jobs: %v", cronJob, seen)
}

func credentials(t *testing.T, db string) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	mustGetJSON(t, &s, "secret", db+"-credentials", "-n", namespace)
	return &s
}

func claimOf(t *testing.T, name string) *corev1.PersistentVolumeClaim {
	t.Helper()
	var c corev1.PersistentVolumeClaim
	mustGetJSON(t, &c, "pvc", name, "-n", namespace)
	if c.Status.Phase != corev1.ClaimBound {
		t.Errorf("claim %s is %s, want Bound", name, c.Status.Phase)
	}
	return &c
}

// apply runs `kubectl apply -f` on manifest.
func apply(t *testing.T, manifest string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	kubectl(t, "apply", "-f", file)
}

// startCleanDatabases removes the Databases names, in order, and everything
// kept of them, now and when the test ends, and logs their state when the
// test fails.
func startCleanDatabases(t *testing.T, names ...string) {
	t.Helper()
	logManagerOnFailure(t)
	purge := func() {
		for _, name := range names {
			purgeDatabase(t, name)
		}
	}
	purge()
	t.Cleanup(purge)
	t.Cleanup(func() {
		if t.Failed() {
			for _, name := range names {
				logDatabase(t, name)
			}
		}
	})
}

// logDatabase logs Database name, its objects and its events.
func logDatabase(t *testing.T, name string) {
	t.Helper()
	for _, args := range [][]string{
		{"get", "database", name, "-n", namespace, "-o", "yaml"},
		{"get", "statefulset,pods,pvc,jobs,cronjobs", "-n", namespace, "-l", "app.kubernetes.io/instance=" + name},
		{"get", "events", "-n", namespace, "--field-selector", "involvedObject.name=" + name},
	} {
		out, stderr, _ := runFull("kubectl", args...)
		t.Logf("state at failure: kubectl %s:\n%s%s", strings.Join(args, " "), out, stderr)
	}
}

// purgeDatabase deletes Database name under deletionPolicy Delete, so that
// rudder removes its claims and generated Secret too, and waits until
// nothing of it is left.
func purgeDatabase(t *testing.T, name string) {
	t.Helper()
	_, _ = run("kubectl", "patch", "database", name, "-n", namespace, "--type", "merge", "-p", `{"spec":{"deletionPolicy":"Delete"}}`)
	if _, err := run("kubectl", "delete", "database", name, "-n", namespace, "--ignore-not-found", "--wait=true", "--timeout=2m"); err != nil {
		t.Errorf("cleanup: deleting Database %s: %v", name, err)
	}
	// Kept by an earlier run under Retain: no Database is left to delete them.
	_, _ = run("kubectl", "delete", "pvc", "data-"+name+"-0", name+"-backup", "-n", namespace, "--ignore-not-found", "--wait=false")
	_, _ = run("kubectl", "delete", "secret", name+"-credentials", "-n", namespace, "--ignore-not-found")
	eventually(t, "nothing left of Database "+name, func() error {
		out, err := run("kubectl", "get", "database,statefulset,pvc,secret,cronjob,job", "-n", namespace, "-o", "name",
			"--field-selector", "metadata.name!=unused")
		if err != nil {
			return err
		}
		var left []string
		for _, o := range strings.Fields(out) {
			base := o[strings.Index(o, "/")+1:]
			if base == name || base == "data-"+name+"-0" || base == name+"-backup" || base == name+"-credentials" ||
				strings.HasPrefix(base, name+"-backup-") || base == name+"-restore" {
				left = append(left, o)
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("still there: %v", left)
		}
		return nil
	})
}
