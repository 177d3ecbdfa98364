//go:build e2e

package e2e

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Issue 11, the manager killed (SIGKILL, as the OOM killer does) while a
// Database's backup Job runs, then while a restore Job runs; each Job then
// finishes while no manager runs, so the next manager finds a finished Job it
// has not recorded. No backup or restore runs twice (one Job and one pod
// each, the same Job throughout), both are recorded, and no credentials
// Secret changes. The Jobs are held (holdJobs) until the kill, so that it
// lands in the middle of the operation however slow the machine is.
func TestFaults_KilledDuringBackupAndRestore(t *testing.T) {
	t.Parallel() // its own operator over its own namespace
	ns := "faults-database"
	op := privateOperator(t, ns)
	src := &nsDatabase{t: t, ns: ns, name: "kill-src"}
	src.create(map[string]any{"version": "16", "storageSize": "1Gi", "database": "orders", "resources": notBestEffort,
		"backup": map[string]any{"enabled": true, "schedule": "0 2 1 1 *", "storageSize": "1Gi"}})
	src.waitReady(metav1.ConditionTrue, "Ready")
	srcSecret := secretOf(t, ns, src.name+"-credentials")

	t.Log("killed while a requested backup Job runs")
	holdJobs(t, ns)
	kubectl(t, "annotate", "database", src.name, "-n", ns, "rudder.dev/backup-now=first")
	backup := waitJob(t, ns, "the backup Job of request first", func(j *batchv1.Job) bool {
		return j.Annotations["rudder.dev/backup-now"] == "first"
	})
	killDuring(t, op, ns, backup, "backup", func() bool { return backupRecorded(t, ns, src.name) })
	eventuallyWithin(t, 3*time.Minute, "Database "+src.name+" BackedUp True with lastBackup", func() error {
		if !backupRecorded(t, ns, src.name) {
			return fmt.Errorf("no backup recorded on Database %s yet", src.name)
		}
		return nil
	})
	checkOnce(t, ns, backup, func(j *batchv1.Job) bool { return j.Annotations["rudder.dev/backup-now"] == "first" })

	t.Log("killed while the restore Job runs")
	dst := &nsDatabase{t: t, ns: ns, name: "kill-dst"}
	holdJobs(t, ns)
	dst.create(map[string]any{"version": "16", "storageSize": "1Gi", "database": "orders", "resources": notBestEffort,
		"restore": map[string]any{"from": src.name}})
	isRestore := func(j *batchv1.Job) bool { return j.Name == dst.name+"-restore" }
	restore := waitJob(t, ns, "the restore Job of "+dst.name, isRestore)
	dstSecret := secretOf(t, ns, dst.name+"-credentials")
	killDuring(t, op, ns, restore, "restore", func() bool { return restoreRecorded(t, ns, dst.name) })

	dst.waitReady(metav1.ConditionTrue, "Ready")
	if !restoreRecorded(t, ns, dst.name) {
		t.Errorf("claim data-%s-0 does not record the restore", dst.name)
	}
	checkOnce(t, ns, restore, isRestore)
	checkSecretUnchanged(t, srcSecret)
	checkSecretUnchanged(t, dstSecret)
	src.checkSteady(1)
	dst.checkSteady(1)
}

func jobSucceeded(ns, name string) error {
	var j batchv1.Job
	found, err := getJSON(&j, "job", name, "-n", ns)
	switch {
	case err != nil:
		return err
	case !found:
		return fmt.Errorf("expected Job %s/%s, saw NotFound", ns, name)
	case j.Status.Succeeded == 0:
		return fmt.Errorf("Job %s/%s: %d succeeded, %d failed, %d active", ns, name, j.Status.Succeeded, j.Status.Failed, j.Status.Active)
	}
	return nil
}

// killDuring kills op's manager while job, held by holdJobs, has not run;
// lets job complete while no manager runs; and starts the next manager. what
// names the operation; recorded says whether rudder recorded its outcome,
// which it must not have done before the next manager starts.
func killDuring(t *testing.T, op *operator, ns string, job batchv1.Job, what string, recorded func() bool) {
	t.Helper()
	op.kill(t)
	if recorded() {
		t.Fatalf("the %s was recorded before the kill: the kill did not land during the %s", what, what)
	}
	releaseJobs(t, ns)
	eventuallyWithin(t, 3*time.Minute, "the "+what+" Job complete while no manager runs", func() error { return jobSucceeded(ns, job.Name) })
	if recorded() {
		t.Fatalf("the %s was recorded while no manager ran", what)
	}
	op.startAgain(t)
}

// notBestEffort are resources that keep a Database's pod out of holdJobs'
// quota.
var notBestEffort = map[string]any{"requests": map[string]any{"cpu": "10m", "memory": "16Mi"}}

// holdJobs refuses every BestEffort pod in ns with a ResourceQuota: the pods
// of the backup and restore Jobs are, the Databases' pods (notBestEffort) are
// not. A Job started meanwhile stays active, with no pod, until releaseJobs.
func holdJobs(t *testing.T, ns string) {
	t.Helper()
	apply(t, `apiVersion: v1
kind: ResourceQuota
metadata:
  name: hold-jobs
  namespace: `+ns+`
spec:
  scopes: [BestEffort]
  hard:
    pods: "0"
`)
	eventually(t, "the quota hold-jobs in force", func() error {
		var q corev1.ResourceQuota
		if _, err := getJSON(&q, "resourcequota", "hold-jobs", "-n", ns); err != nil {
			return err
		}
		if _, ok := q.Status.Hard[corev1.ResourcePods]; !ok {
			return fmt.Errorf("quota hold-jobs not computed yet")
		}
		return nil
	})
}

func releaseJobs(t *testing.T, ns string) {
	t.Helper()
	kubectl(t, "delete", "resourcequota", "hold-jobs", "-n", ns, "--wait=true")
}

// waitJob waits for the one Job in ns that is, and returns it.
func waitJob(t *testing.T, ns, what string, is func(*batchv1.Job) bool) batchv1.Job {
	t.Helper()
	var found batchv1.Job
	eventuallyWithin(t, 3*time.Minute, what, func() error {
		jobs, err := jobsWhere(ns, is)
		if err != nil {
			return err
		}
		if len(jobs) != 1 {
			return fmt.Errorf("%d such Jobs", len(jobs))
		}
		found = jobs[0]
		return nil
	})
	return found
}

func jobsWhere(ns string, is func(*batchv1.Job) bool) ([]batchv1.Job, error) {
	var list batchv1.JobList
	if _, err := getJSON(&list, "jobs", "-n", ns); err != nil {
		return nil, err
	}
	var out []batchv1.Job
	for i := range list.Items {
		if is(&list.Items[i]) {
			out = append(out, list.Items[i])
		}
	}
	return out, nil
}

// checkOnce fails the test unless job is still the only Job that is, and it
// ran one pod, which succeeded.
func checkOnce(t *testing.T, ns string, job batchv1.Job, is func(*batchv1.Job) bool) {
	t.Helper()
	jobs, err := jobsWhere(ns, is)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].UID != job.UID {
		t.Errorf("Job %s: want it the only one, unchanged (uid %s); saw %d: %s", job.Name, job.UID, len(jobs), toJSON(jobs))
		return
	}
	var pods corev1.PodList
	if _, err := getJSON(&pods, "pods", "-n", ns, "-l", "batch.kubernetes.io/controller-uid="+string(job.UID)); err != nil {
		t.Fatal(err)
	}
	if st := jobs[0].Status; len(pods.Items) != 1 || st.Succeeded != 1 || st.Failed != 0 {
		t.Errorf("Job %s ran %d pods (%d succeeded, %d failed), want one that succeeded", job.Name, len(pods.Items), st.Succeeded, st.Failed)
	}
}

// backupRecorded says whether Database name reports a successful backup.
func backupRecorded(t *testing.T, ns, name string) bool {
	t.Helper()
	var db database
	mustGetJSON(t, &db, "database", name, "-n", ns)
	c := condition(db.Status.Conditions, "BackedUp")
	return db.Status.LastBackup != "" && c != nil && c.Status == metav1.ConditionTrue
}

// restoreRecorded says whether Database name's data claim records a restore.
func restoreRecorded(t *testing.T, ns, name string) bool {
	t.Helper()
	var c corev1.PersistentVolumeClaim
	found, err := getJSON(&c, "pvc", "data-"+name+"-0", "-n", ns)
	if err != nil {
		t.Fatal(err)
	}
	return found && c.Annotations["rudder.dev/restored-from"] != ""
}

// secretOf waits for Secret name in ns and returns it.
func secretOf(t *testing.T, ns, name string) corev1.Secret {
	t.Helper()
	var s corev1.Secret
	eventually(t, "Secret "+ns+"/"+name, func() error {
		found, err := getJSON(&s, "secret", name, "-n", ns)
		if err == nil && !found {
			err = fmt.Errorf("expected Secret %s/%s, saw NotFound", ns, name)
		}
		return err
	})
	return s
}

// checkSecretUnchanged fails the test if the Secret was replaced or written.
func checkSecretUnchanged(t *testing.T, before corev1.Secret) {
	t.Helper()
	after := secretOf(t, before.Namespace, before.Name)
	if after.UID != before.UID || after.ResourceVersion != before.ResourceVersion || !reflect.DeepEqual(after.Data, before.Data) {
		keys := make([]string, 0, len(after.Data))
		for k := range after.Data {
			keys = append(keys, k)
		}
		t.Errorf("Secret %s/%s changed (uid %s→%s, resourceVersion %s→%s, keys now %s)", before.Namespace, before.Name,
			before.UID, after.UID, before.ResourceVersion, after.ResourceVersion, strings.Join(keys, ","))
	}
}
