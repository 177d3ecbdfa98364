package backup

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/hook"
)

// restoreSpec is a Database "orders" restored from Database "shop".
func restoreSpec(backup string) map[string]any {
	spec := dbSpec(false, "")
	spec["restore"] = map[string]any{"from": "shop", "backup": backup}
	return spec
}

func claim(ns, name string, annotations map[string]string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resourceMust("1Gi")}}},
	}
}

// sourceClaim is the backup claim of Database "shop", as its backup hook makes it.
func sourceClaim(ns string) *corev1.PersistentVolumeClaim {
	return claim(ns, "shop-backup", map[string]string{hook.AnnotationGeneratedFor: "Database/shop"})
}

func reconcileRestore(t *testing.T, h *Restore, db *unstructured.Unstructured) (hook.Result, map[string]any) {
	t.Helper()
	res, err := h.Reconcile(context.Background(), db, db.Object["spec"].(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := res.Status["restore"].(map[string]any)
	return res, st
}

func wantCondition(t *testing.T, res hook.Result, status metav1.ConditionStatus, reason, inMessage string) {
	t.Helper()
	c := res.Condition
	if c.Status != status || c.Reason != reason || !strings.Contains(c.Message, inMessage) {
		t.Errorf("condition = %s/%s %q, want %s/%s mentioning %q", c.Status, c.Reason, c.Message, status, reason, inMessage)
	}
	if !res.BlocksReady {
		t.Error("the restore does not block readiness")
	}
}

func TestRestore_NotRequested(t *testing.T) {
	h := &Restore{Client: kube(t), Reader: kube(t)}
	db := newDatabase(t, kube(t), dbSpec(false, ""))
	res, _ := reconcileRestore(t, h, db)
	if res.Condition.Status != metav1.ConditionTrue || res.BlocksReady {
		t.Errorf("condition = %+v, blocks = %v; want True, not blocking", res.Condition, res.BlocksReady)
	}
	if v, ok := res.Status["restore"]; !ok || v != nil {
		t.Errorf("status.restore = %v, want removed (nil)", v)
	}
}

// TestRestore_Lifecycle follows one restore: no source yet, a Job started,
// its failure and retry, its success recorded on the data claim, and a
// Database created again over that claim, which is not restored twice.
func TestRestore_Lifecycle(t *testing.T) {
	ctx := context.Background()
	k8s := kube(t)
	h := &Restore{Client: k8s, Reader: k8s}
	db := newDatabase(t, k8s, restoreSpec("latest"))
	ns := db.GetNamespace()
	job := func() (*batchv1.Job, error) {
		var j batchv1.Job
		return &j, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "orders-restore"}, &j)
	}

	res, st := reconcileRestore(t, h, db)
	wantCondition(t, res, metav1.ConditionFalse, "SourceNotFound", `"shop" has no backup volume shop-backup`)
	if st["phase"] != "Pending" || st["source"] != "shop" {
		t.Errorf("status.restore = %v, want Pending from shop", st)
	}
	if _, err := job(); !apierrors.IsNotFound(err) {
		t.Fatalf("a restore Job exists without a source (err %v)", err)
	}

	if err := k8s.Create(ctx, sourceClaim(ns)); err != nil {
		t.Fatal(err)
	}
	res, st = reconcileRestore(t, h, db)
	wantCondition(t, res, metav1.ConditionFalse, "WaitingForClaim", "claim data-orders-0")
	if st["phase"] != "Pending" || res.RequeueAfter == 0 {
		t.Errorf("status.restore = %v, requeue %v; want Pending, looked at again", st, res.RequeueAfter)
	}
	if _, err := job(); !apierrors.IsNotFound(err) {
		t.Fatalf("a restore Job exists before the claim it loads into (err %v)", err)
	}

	// The StatefulSet made the claim.
	if err := k8s.Create(ctx, claim(ns, "data-orders-0", nil)); err != nil {
		t.Fatal(err)
	}
	res, st = reconcileRestore(t, h, db)
	wantCondition(t, res, metav1.ConditionFalse, "Restoring", "orders-restore started")
	if st["phase"] != "Running" {
		t.Errorf("status.restore = %v, want Running", st)
	}
	j, err := job()
	if err != nil {
		t.Fatal(err)
	}
	checkRestoreJob(t, j)

	finish(t, k8s, j, false, time.Now())
	res, st = reconcileRestore(t, h, db)
	wantCondition(t, res, metav1.ConditionFalse, "RestoreFailed", "delete the Job to try again")
	if st["phase"] != "Failed" {
		t.Errorf("status.restore = %v, want Failed", st)
	}
	if err := k8s.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	reconcileRestore(t, h, db)
	if j, err = job(); err != nil || j.Status.Failed != 0 {
		t.Fatalf("no new restore Job after the failed one was deleted (err %v)", err)
	}

	// The Job's script reported the dump.
	reportFromJob(t, k8s, j, "shop-20261129T020000Z.dump")
	done := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	finish(t, k8s, j, true, done)
	res, st = reconcileRestore(t, h, db)
	if res.Condition.Status != metav1.ConditionTrue || res.Condition.Reason != "Restored" {
		t.Errorf("condition = %+v, want True/Restored", res.Condition)
	}
	want := map[string]any{"source": "shop", "backup": "shop-20261129T020000Z.dump", "phase": "Succeeded", "completed": "2026-11-29T03:00:00Z"}
	for k, v := range want {
		if st[k] != v {
			t.Errorf("status.restore.%s = %v, want %v", k, st[k], v)
		}
	}
	var data corev1.PersistentVolumeClaim
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "data-orders-0"}, &data); err != nil {
		t.Fatal(err)
	}
	if got := data.Annotations[AnnotationRestoredFrom]; got != "shop/shop-20261129T020000Z.dump" {
		t.Errorf("claim annotation %s = %q, want the source and dump", AnnotationRestoredFrom, got)
	}
	if got := data.Annotations[hook.AnnotationGeneratedFor]; got != hook.GeneratedFor(db) {
		t.Errorf("claim annotation %s = %q, want %s", hook.AnnotationGeneratedFor, got, hook.GeneratedFor(db))
	}

	// Deleted and created again (Retain): the claim says it was restored.
	if err := k8s.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	again := newDatabase(t, k8s, restoreSpec("latest"))
	again.SetNamespace(ns)
	again.SetCreationTimestamp(metav1.NewTime(time.Now().Add(time.Hour)))
	res, _ = reconcileRestore(t, h, again)
	if res.Condition.Reason != "Restored" {
		t.Errorf("re-created Database: condition = %+v, want Restored from the claim's record", res.Condition)
	}
	if _, err := job(); !apierrors.IsNotFound(err) {
		t.Errorf("re-created Database: a second restore Job was started (err %v)", err)
	}
}

// TestRestore_NeverOverData: a claim older than the Database holds data a
// restore would overwrite; the hook refuses and says how to get a restore.
func TestRestore_NeverOverData(t *testing.T) {
	ctx := context.Background()
	k8s := kube(t)
	h := &Restore{Client: k8s, Reader: k8s}
	db := newDatabase(t, k8s, restoreSpec("latest"))
	for _, c := range []*corev1.PersistentVolumeClaim{sourceClaim(db.GetNamespace()), claim(db.GetNamespace(), "data-orders-0", nil)} {
		if err := k8s.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	db.SetCreationTimestamp(metav1.NewTime(time.Now().Add(time.Hour)))
	res, _ := reconcileRestore(t, h, db)
	wantCondition(t, res, metav1.ConditionFalse, "DataExists", "delete this Database and the claim")
	var jobs batchv1.JobList
	if err := k8s.List(ctx, &jobs, client.InNamespace(db.GetNamespace())); err != nil || len(jobs.Items) != 0 {
		t.Errorf("%d Jobs (err %v), want none", len(jobs.Items), err)
	}
}

// TestRestore_OnlyItsOwn: a restore reads only a backup claim the backup
// hook made for the source, runs only its own Job, and names no Database of
// another namespace; each refusal names the object and starts nothing.
func TestRestore_OnlyItsOwn(t *testing.T) {
	ctx := context.Background()
	k8s := kube(t)
	tests := []struct {
		name       string
		from       string
		objects    func(ns string) []client.Object
		wantReason string
		wantInMsg  string
		wantJob    bool // the Job there before, not the hook's
	}{
		{name: "a claim under the source's backup name that the backup hook did not make", from: "shop",
			objects: func(ns string) []client.Object {
				return []client.Object{claim(ns, "shop-backup", nil), claim(ns, "data-orders-0", nil)}
			},
			wantReason: hook.ReasonObjectNotOwned, wantInMsg: "claim shop-backup was not made by rudder's backup hook for Database shop"},
		{name: "a Job under the restore Job's name that is not the Database's", from: "shop",
			objects: func(ns string) []client.Object {
				j := unrelatedJob(ns, "orders-restore")
				return []client.Object{sourceClaim(ns), claim(ns, "data-orders-0", nil), j}
			},
			wantReason: hook.ReasonObjectNotOwned, wantInMsg: "Job orders-restore exists but was not made by rudder for Database orders",
			wantJob: true},
		{name: "a Database of another namespace", from: "team-b/shop",
			wantReason: ReasonCrossNamespaceRef, wantInMsg: `spec.restore.from: "team-b/shop" names another namespace`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &Restore{Client: k8s, Reader: k8s}
			spec := restoreSpec("latest")
			spec["restore"].(map[string]any)["from"] = tt.from
			db := newDatabase(t, k8s, spec)
			if tt.objects != nil {
				for _, o := range tt.objects(db.GetNamespace()) {
					if err := k8s.Create(ctx, o); err != nil {
						t.Fatal(err)
					}
				}
			}
			res, _ := reconcileRestore(t, h, db)
			wantCondition(t, res, metav1.ConditionFalse, tt.wantReason, tt.wantInMsg)
			var jobs batchv1.JobList
			if err := k8s.List(ctx, &jobs, client.InNamespace(db.GetNamespace())); err != nil {
				t.Fatal(err)
			}
			if n := len(jobs.Items); (n == 1) != tt.wantJob || n > 1 || (n == 1 && len(jobs.Items[0].OwnerReferences) != 0) {
				t.Errorf("%d Jobs %v, want only the one there before, unchanged", n, jobs.Items)
			}
		})
	}
}

// TestRestore_ForgedRecord: a claim from before the Database that says it was
// restored, but was not made for this Database, is not taken at its word.
func TestRestore_ForgedRecord(t *testing.T) {
	ctx := context.Background()
	k8s := kube(t)
	h := &Restore{Client: k8s, Reader: k8s}
	db := newDatabase(t, k8s, restoreSpec("latest"))
	forged := claim(db.GetNamespace(), "data-orders-0", map[string]string{AnnotationRestoredFrom: "shop/shop-20261129T020000Z.dump"})
	for _, c := range []*corev1.PersistentVolumeClaim{sourceClaim(db.GetNamespace()), forged} {
		if err := k8s.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	db.SetCreationTimestamp(metav1.NewTime(time.Now().Add(time.Hour)))
	res, _ := reconcileRestore(t, h, db)
	wantCondition(t, res, metav1.ConditionFalse, "DataExists", "delete this Database and the claim")
}

// TestRestore_ClaimLostAfterTheJob: the claim a finished restore loaded was
// deleted before rudder recorded it. The hook says so and how to restore
// again, and returns no error: the release must go on to make a new claim.
func TestRestore_ClaimLostAfterTheJob(t *testing.T) {
	ctx := context.Background()
	k8s := kube(t)
	h := &Restore{Client: k8s, Reader: k8s}
	db := newDatabase(t, k8s, restoreSpec("latest"))
	ns := db.GetNamespace()
	data := claim(ns, "data-orders-0", nil)
	for _, c := range []*corev1.PersistentVolumeClaim{sourceClaim(ns), data} {
		if err := k8s.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	reconcileRestore(t, h, db)
	var j batchv1.Job
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "orders-restore"}, &j); err != nil {
		t.Fatal(err)
	}
	finish(t, k8s, &j, true, time.Now())
	if err := k8s.Delete(ctx, data); err != nil {
		t.Fatal(err)
	}
	res, st := reconcileRestore(t, h, db)
	wantCondition(t, res, metav1.ConditionFalse, "RestoreLost", "delete the Job to restore again")
	if st["phase"] != "Failed" {
		t.Errorf("status.restore = %v, want Failed", st)
	}
}

// checkRestoreJob: the Job restores the source's dumps, read-only, into
// this Database's server with this Database's credentials.
func checkRestoreJob(t *testing.T, j *batchv1.Job) {
	t.Helper()
	pod := j.Spec.Template.Spec
	c := pod.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
		if e.ValueFrom != nil {
			env[e.Name] = e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		}
	}
	want := map[string]string{
		EnvHost: "orders", EnvDatabase: "shop", EnvPrefix: "shop", EnvRestoreFile: "latest",
		EnvUser: "orders-credentials/username", EnvPassword: "orders-credentials/password",
		EnvReportFile: corev1.TerminationMessagePathDefault,
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("restore Job env %s = %q, want %q", k, env[k], v)
		}
	}
	if c.Command[2] != RestoreScript() {
		t.Error("the restore Job does not run RestoreScript")
	}
	if v := pod.Volumes[0].PersistentVolumeClaim; v == nil || v.ClaimName != "shop-backup" || !v.ReadOnly || !c.VolumeMounts[0].ReadOnly {
		t.Errorf("backup volume = %+v, mount %+v; want shop-backup read-only", v, c.VolumeMounts[0])
	}
	if j.Labels[LabelBackupOf] != "" {
		t.Error("the restore Job carries the backup label: the backup hook would count it as a backup")
	}
	if len(j.OwnerReferences) != 1 || j.OwnerReferences[0].Kind != "Database" {
		t.Errorf("owner references = %+v, want the Database", j.OwnerReferences)
	}
}

// reportFromJob makes a succeeded pod of job whose container reported
// message, as the scripts do through the termination message.
func reportFromJob(t *testing.T, k8s client.Client, j *batchv1.Job, message string) {
	t.Helper()
	ctx := context.Background()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: j.Namespace, Name: j.Name + "-x",
			Labels:          map[string]string{batchv1.JobNameLabel: j.Name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(j, batchv1.SchemeGroupVersion.WithKind("Job"))}},
		Spec: j.Spec.Template.Spec,
	}
	if err := k8s.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	p.Status = corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{{
		Name: p.Spec.Containers[0].Name, Image: p.Spec.Containers[0].Image,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Message: message}},
	}}}
	if err := k8s.Status().Update(ctx, p); err != nil {
		t.Fatal(err)
	}
}

// unrelatedJob is a Job of someone else's under name.
func unrelatedJob(ns, name string) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}}}}
}
