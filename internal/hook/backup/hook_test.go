package backup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/test/testenv"
)

var (
	kubeOnce sync.Once
	kubeEnv  *envtest.Environment
	kubeCl   client.Client
	kubeErr  error
)

// kube returns a client of a real API server (envtest), started on first use
// so that the script tests do not wait for it.
func kube(t *testing.T) client.Client {
	t.Helper()
	kubeOnce.Do(func() {
		env, cfg, err := testenv.Start()
		if err != nil {
			kubeErr = err
			return
		}
		kubeEnv = env
		kubeCl, kubeErr = client.New(cfg, client.Options{Scheme: scheme.Scheme})
	})
	if kubeErr != nil {
		t.Fatal(kubeErr)
	}
	return kubeCl
}

func stopKube() {
	if kubeEnv != nil {
		_ = kubeEnv.Stop()
	}
}

func newDatabase(t *testing.T, k8s client.Client, spec map[string]any) *unstructured.Unstructured {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bk-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion("database.my.domain/v1")
	u.SetKind("Database")
	u.SetNamespace(ns.Name)
	u.SetName("orders")
	u.SetUID("5e0c8a9e-0000-4000-8000-000000000001")
	return u
}

func dbSpec(enabled bool, schedule string) map[string]any {
	return map[string]any{
		"version": "16", "database": "shop", "storageSize": "1Gi",
		"credentials": map[string]any{"secretName": "orders-credentials", "usernameKey": "username", "passwordKey": "password"},
		"backup":      map[string]any{"enabled": enabled, "schedule": schedule, "storageSize": "2Gi", "retention": int64(3)},
	}
}

func TestHook_KeepsCronJobAndVolume(t *testing.T) {
	ctx := context.Background()
	k8s := kube(t)
	h := &Hook{Client: k8s, Reader: k8s}
	db := newDatabase(t, k8s, dbSpec(true, "0 2 * * *"))
	res, err := h.Reconcile(ctx, db, db.Object["spec"].(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	var cj batchv1.CronJob
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: db.GetNamespace(), Name: "orders-backup"}, &cj); err != nil {
		t.Fatal(err)
	}
	job := cj.Spec.JobTemplate.Spec
	pod := job.Template.Spec
	c := pod.Containers[0]
	checks := []struct {
		name string
		ok   bool
	}{
		{"schedule", cj.Spec.Schedule == "0 2 * * *"},
		{"concurrencyPolicy Forbid", cj.Spec.ConcurrencyPolicy == batchv1.ForbidConcurrent},
		{"startingDeadlineSeconds", cj.Spec.StartingDeadlineSeconds != nil && *cj.Spec.StartingDeadlineSeconds > 0},
		{"history limits", *cj.Spec.SuccessfulJobsHistoryLimit == 3 && *cj.Spec.FailedJobsHistoryLimit == 3},
		{"backoffLimit", job.BackoffLimit != nil && *job.BackoffLimit == 2},
		{"restricted pod", *pod.SecurityContext.RunAsNonRoot && pod.SecurityContext.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault},
		{"restricted container", !*c.SecurityContext.AllowPrivilegeEscalation && c.SecurityContext.Capabilities.Drop[0] == "ALL"},
		{"image of the Database's version", c.Image == "postgres:16"},
		{"runs the script as rendered", len(c.Command) == 3 && c.Command[2] == Script()},
		{"backup volume mounted", pod.Volumes[0].PersistentVolumeClaim.ClaimName == "orders-backup"},
		{"owned by the Database", len(cj.OwnerReferences) == 1 && cj.OwnerReferences[0].UID == db.GetUID()},
	}
	for _, ch := range checks {
		if !ch.ok {
			t.Errorf("CronJob: %s is not as wanted: %+v", ch.name, cj.Spec)
		}
	}
	for _, e := range c.Env {
		if e.Name == EnvPassword && (e.Value != "" || e.ValueFrom.SecretKeyRef.Name != "orders-credentials") {
			t.Errorf("PGPASSWORD is %+v, want a reference to the Secret", e)
		}
	}
	var pvc corev1.PersistentVolumeClaim
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: db.GetNamespace(), Name: "orders-backup"}, &pvc); err != nil {
		t.Fatal(err)
	}
	if got := pvc.Spec.Resources.Requests.Storage().String(); got != "2Gi" || len(pvc.OwnerReferences) != 0 ||
		pvc.Annotations[hook.AnnotationGeneratedFor] != hook.GeneratedFor(db) {
		t.Errorf("backup volume of %s with owners %v, annotations %v; want 2Gi, none, made for this Database/orders by UID",
			got, pvc.OwnerReferences, pvc.Annotations)
	}
	if res.Condition.Status != metav1.ConditionUnknown || res.Condition.Reason != "NoBackupYet" || res.RequeueAfter == 0 {
		t.Errorf("condition %+v, requeue %s", res.Condition, res.RequeueAfter)
	}

	// A new schedule reaches the CronJob.
	db.Object["spec"] = dbSpec(true, "30 3 * * 0")
	if _, err := h.Reconcile(ctx, db, db.Object["spec"].(map[string]any)); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(&cj), &cj); err != nil || cj.Spec.Schedule != "30 3 * * 0" {
		t.Errorf("schedule %q after the change (err %v)", cj.Spec.Schedule, err)
	}

	// Disabled: the CronJob goes, the volume and its dumps stay.
	db.Object["spec"] = dbSpec(false, "30 3 * * 0")
	if _, err := h.Reconcile(ctx, db, db.Object["spec"].(map[string]any)); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(&cj), &cj); !apierrors.IsNotFound(err) {
		t.Errorf("CronJob still there after disabling backups (err %v)", err)
	}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(&pvc), &pvc); err != nil {
		t.Errorf("backup volume gone after disabling backups: %v", err)
	}
}

// finish sets a Job's status as the Job controller would.
func finish(t *testing.T, k8s client.Client, j *batchv1.Job, ok bool, at time.Time) {
	t.Helper()
	start := metav1.NewTime(at.Add(-time.Minute))
	end := metav1.NewTime(at)
	j.Status.StartTime = &start
	if ok {
		j.Status.Succeeded, j.Status.CompletionTime = 1, &end
		j.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: end},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: end},
		}
	} else {
		j.Status.Failed = 3
		j.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: end},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: end},
		}
	}
	if err := k8s.Status().Update(context.Background(), j); err != nil {
		t.Fatal(err)
	}
}

func TestHook_ReportsJobOutcomesAndBacksUpOnRequest(t *testing.T) {
	ctx := context.Background()
	k8s := kube(t)
	h := &Hook{Client: k8s, Reader: k8s}
	db := newDatabase(t, k8s, dbSpec(true, "0 2 * * *"))
	db.SetAnnotations(map[string]string{AnnotationBackupNow: "first"})
	vals := db.Object["spec"].(map[string]any)
	for i := 0; i < 2; i++ { // the same request twice is one backup
		if _, err := h.Reconcile(ctx, db, vals); err != nil {
			t.Fatal(err)
		}
	}
	var jobs batchv1.JobList
	if err := k8s.List(ctx, &jobs, client.InNamespace(db.GetNamespace())); err != nil || len(jobs.Items) != 1 {
		t.Fatalf("%d Jobs after one request (err %v), want 1", len(jobs.Items), err)
	}
	t0 := time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC)
	reportFromJob(t, k8s, &jobs.Items[0], "orders-20261128T020000Z.dump\norders-20261129T020000Z.dump\norders-2026112")
	finish(t, k8s, &jobs.Items[0], true, t0)

	db.SetAnnotations(map[string]string{AnnotationBackupNow: "second"})
	if _, err := h.Reconcile(ctx, db, vals); err != nil {
		t.Fatal(err)
	}
	if err := k8s.List(ctx, &jobs, client.InNamespace(db.GetNamespace())); err != nil || len(jobs.Items) != 2 {
		t.Fatalf("%d Jobs after two requests (err %v), want 2", len(jobs.Items), err)
	}
	for i := range jobs.Items {
		if jobs.Items[i].Status.CompletionTime == nil {
			finish(t, k8s, &jobs.Items[i], false, t0.Add(time.Hour))
		}
	}
	res, err := h.Reconcile(ctx, db, vals)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status["lastBackup"] != "2026-11-29T02:00:00Z" {
		t.Errorf("lastBackup = %v, want the last successful Job's completion", res.Status["lastBackup"])
	}
	// The dumps its script reported kept, newest first; a line cut short is no dump.
	wantBackups := []any{
		map[string]any{"name": "orders-20261129T020000Z.dump", "completed": "2026-11-29T02:00:00Z"},
		map[string]any{"name": "orders-20261128T020000Z.dump", "completed": "2026-11-28T02:00:00Z"},
	}
	if !reflect.DeepEqual(res.Status["backups"], wantBackups) {
		t.Errorf("backups = %v, want %v", res.Status["backups"], wantBackups)
	}
	if res.Condition.Status != metav1.ConditionFalse || res.Condition.Reason != "BackupFailed" ||
		!strings.Contains(res.Condition.Message, "backoff limit") {
		t.Errorf("condition = %+v, want BackupFailed naming why", res.Condition)
	}
	if res.BlocksReady {
		t.Error("a failed backup blocks readiness: the database still serves")
	}
}

// TestHook_BackupNowOfTheLongestName: a Database of the longest name the CRD
// allows (44 characters) gets its requested backup: the Job's name fits.
func TestHook_BackupNowOfTheLongestName(t *testing.T) {
	ctx := context.Background()
	k8s := kube(t)
	h := &Hook{Client: k8s, Reader: k8s}
	db := newDatabase(t, k8s, dbSpec(true, "0 2 * * *"))
	db.SetName(strings.Repeat("d", 44))
	db.SetAnnotations(map[string]string{AnnotationBackupNow: "now"})
	if _, err := h.Reconcile(ctx, db, db.Object["spec"].(map[string]any)); err != nil {
		t.Fatal(err)
	}
	var jobs batchv1.JobList
	if err := k8s.List(ctx, &jobs, client.InNamespace(db.GetNamespace())); err != nil || len(jobs.Items) != 1 {
		t.Fatalf("%d Jobs (err %v), want the requested one", len(jobs.Items), err)
	}
	if n := len(jobs.Items[0].Name); n > 63 {
		t.Errorf("Job name %q has %d characters, more than 63", jobs.Items[0].Name, n)
	}
}

func TestHook_Finalize(t *testing.T) {
	ctx := context.Background()
	k8s := kube(t)
	tests := []struct {
		name       string
		policy     string
		wantExists bool
	}{
		{name: "volumes retained by default", wantExists: true},
		{name: "volumes deleted under Delete", policy: "Delete", wantExists: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &Hook{Client: k8s, Reader: k8s}
			spec := dbSpec(true, "0 2 * * *")
			if tt.policy != "" {
				spec["deletionPolicy"] = tt.policy
			}
			db := newDatabase(t, k8s, spec)
			if _, err := h.Reconcile(ctx, db, spec); err != nil {
				t.Fatal(err)
			}
			data := &corev1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{Namespace: db.GetNamespace(), Name: "data-orders-0",
					Labels: map[string]string{"app.kubernetes.io/instance": "orders", "app.kubernetes.io/name": "database"}},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resourceMust("1Gi")}}},
			}
			if err := k8s.Create(ctx, data); err != nil {
				t.Fatal(err)
			}
			// Claims that carry the labels but were made for another Database.
			for _, name := range []string{"orders-backup-copy", "data-orders-9"} {
				c := claim(db.GetNamespace(), name, map[string]string{hook.AnnotationGeneratedFor: "Database/other"})
				c.Labels = map[string]string{LabelBackupOf: "orders", "app.kubernetes.io/instance": "orders", "app.kubernetes.io/name": "database"}
				if err := k8s.Create(ctx, c); err != nil {
					t.Fatal(err)
				}
			}
			if err := h.Finalize(ctx, db); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"orders-backup-copy", "data-orders-9"} {
				var pvc corev1.PersistentVolumeClaim
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: db.GetNamespace(), Name: name}, &pvc); err != nil || !pvc.DeletionTimestamp.IsZero() {
					t.Errorf("%s, not the Database's, was deleted (err %v)", name, err)
				}
			}
			for _, name := range []string{"orders-backup", "data-orders-0"} {
				var pvc corev1.PersistentVolumeClaim
				err := k8s.Get(ctx, client.ObjectKey{Namespace: db.GetNamespace(), Name: name}, &pvc)
				exists := err == nil && pvc.DeletionTimestamp.IsZero()
				if exists != tt.wantExists {
					t.Errorf("%s exists = %v, want %v", name, exists, tt.wantExists)
				}
			}
		})
	}
}

func resourceMust(s string) resource.Quantity { return resource.MustParse(s) }

// TestHook_LeavesOthersObjectsAlone: objects under the names the hook uses
// that it did not make for the Database — a CronJob reports-backup, a claim
// reports-backup, a Job with the backup label — are neither changed, adopted
// nor deleted, with backups on, off, and on deletion; the condition names
// the object in the way.
func TestHook_LeavesOthersObjectsAlone(t *testing.T) {
	ctx := context.Background()
	k8s := kube(t)
	foreignCronJob := func(ns string) client.Object {
		return &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reports-backup"},
			Spec: batchv1.CronJobSpec{Schedule: "15 4 * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: unrelatedJob(ns, "x").Spec}}}
	}
	foreignClaim := func(ns string) client.Object {
		c := claim(ns, "reports-backup", nil)
		c.Labels = map[string]string{LabelBackupOf: "reports"} // labels prove nothing
		return c
	}
	tests := []struct {
		name       string
		foreign    func(ns string) client.Object
		enabled    bool
		wantReason string // "" for the hook's usual report
		wantInMsg  string
	}{
		{name: "a CronJob reports-backup, backups on", foreign: foreignCronJob, enabled: true,
			wantReason: hook.ReasonObjectNotOwned, wantInMsg: "CronJob reports-backup exists but was not made by rudder for Database reports"},
		{name: "a CronJob reports-backup, backups off", foreign: foreignCronJob},
		{name: "a claim reports-backup, backups on", foreign: foreignClaim, enabled: true,
			wantReason: hook.ReasonObjectNotOwned, wantInMsg: "PersistentVolumeClaim reports-backup exists but was not made by rudder for Database reports"},
		{name: "a claim reports-backup, backups off", foreign: foreignClaim},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &Hook{Client: k8s, Reader: k8s}
			spec := dbSpec(tt.enabled, "0 2 * * *")
			spec["deletionPolicy"] = "Delete"
			db := newDatabase(t, k8s, spec)
			db.SetName("reports")
			foreign := tt.foreign(db.GetNamespace())
			if err := k8s.Create(ctx, foreign); err != nil {
				t.Fatal(err)
			}
			before := foreign.DeepCopyObject().(client.Object)
			res, err := h.Reconcile(ctx, db, spec)
			if err != nil {
				t.Fatal(err)
			}
			c := res.Condition
			if tt.wantReason != "" && (c.Status != metav1.ConditionFalse || c.Reason != tt.wantReason ||
				!strings.Contains(c.Message, tt.wantInMsg) || !strings.Contains(c.Message, "Delete or rename")) {
				t.Errorf("condition %+v, want False %s naming the object and how to make room", c, tt.wantReason)
			}
			if tt.wantReason == "" && c.Reason == hook.ReasonObjectNotOwned {
				t.Errorf("condition %+v: backups are off, nothing is in the way", c)
			}
			if err := h.Finalize(ctx, db); err != nil {
				t.Fatal(err)
			}
			after := foreign.DeepCopyObject().(client.Object)
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(foreign), after); err != nil || !after.GetDeletionTimestamp().IsZero() {
				t.Fatalf("%s was deleted (err %v)", foreign.GetName(), err)
			}
			if after.GetResourceVersion() != before.GetResourceVersion() {
				t.Errorf("%s was changed: %+v", foreign.GetName(), after)
			}
			// Nothing of the hook's was made while something is in the way.
			var jobs batchv1.CronJobList
			if err := k8s.List(ctx, &jobs, client.InNamespace(db.GetNamespace())); err != nil {
				t.Fatal(err)
			}
			for _, cj := range jobs.Items {
				if hook.Controls(db, &cj) && tt.wantReason != "" {
					t.Errorf("CronJob %s made while %s is in the way", cj.Name, foreign.GetName())
				}
			}
		})
	}
}

// TestHook_ReportsOnlyItsJobs: a Job that carries the backup label but is not
// the Database's is no backup of it, and a Job under the name of a requested
// backup that is not the Database's is not taken for that backup.
func TestHook_ReportsOnlyItsJobs(t *testing.T) {
	ctx := context.Background()
	k8s := kube(t)
	h := &Hook{Client: k8s, Reader: k8s}
	db := newDatabase(t, k8s, dbSpec(true, "0 2 * * *"))
	vals := db.Object["spec"].(map[string]any)
	forged := unrelatedJob(db.GetNamespace(), "orders-forged")
	forged.Labels = map[string]string{LabelBackupOf: "orders"}
	forged.Annotations = map[string]string{AnnotationBackupNow: "first"}
	if err := k8s.Create(ctx, forged); err != nil {
		t.Fatal(err)
	}
	finish(t, k8s, forged, true, time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC))

	res, err := h.Reconcile(ctx, db, vals)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status["lastBackup"] != nil || res.Condition.Reason != "NoBackupYet" {
		t.Errorf("status %v, condition %+v; another's Job was taken for a backup", res.Status, res.Condition)
	}

	// A Job of the Database's CronJob is one of its backups.
	var cj batchv1.CronJob
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: db.GetNamespace(), Name: "orders-backup"}, &cj); err != nil {
		t.Fatal(err)
	}
	scheduled := unrelatedJob(db.GetNamespace(), "orders-backup-29000000")
	scheduled.Labels = map[string]string{LabelBackupOf: "orders"}
	scheduled.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(&cj, batchv1.SchemeGroupVersion.WithKind("CronJob"))}
	if err := k8s.Create(ctx, scheduled); err != nil {
		t.Fatal(err)
	}
	finish(t, k8s, scheduled, true, time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC))
	if res, err = h.Reconcile(ctx, db, vals); err != nil {
		t.Fatal(err)
	}
	if res.Status["lastBackup"] != "2026-11-28T02:00:00Z" || res.Condition.Reason != "BackupSucceeded" {
		t.Errorf("status %v, condition %+v; want the CronJob's Job reported, not the other one", res.Status, res.Condition)
	}

	db.SetAnnotations(map[string]string{AnnotationBackupNow: "first"})
	if _, err := h.Reconcile(ctx, db, vals); err != nil {
		t.Fatal(err)
	}
	var jobs batchv1.JobList
	if err := k8s.List(ctx, &jobs, client.InNamespace(db.GetNamespace())); err != nil {
		t.Fatal(err)
	}
	mine := 0
	for i := range jobs.Items {
		if hook.Controls(db, &jobs.Items[i]) {
			mine++
		}
	}
	if mine != 1 {
		t.Errorf("%d Jobs of the Database after a request that another's Job carries, want 1: %v", mine, jobs.Items)
	}

	// A Job under the name of the next request, made by someone else.
	sum := sha256.Sum256([]byte("second"))
	if err := k8s.Create(ctx, unrelatedJob(db.GetNamespace(), "orders-now-"+hex.EncodeToString(sum[:])[:8])); err != nil {
		t.Fatal(err)
	}
	db.SetAnnotations(map[string]string{AnnotationBackupNow: "second"})
	res, err = h.Reconcile(ctx, db, vals)
	if err != nil {
		t.Fatal(err)
	}
	if res.Condition.Reason != hook.ReasonObjectNotOwned || !strings.Contains(res.Condition.Message, "Job orders-now-") {
		t.Errorf("condition %+v, want ObjectNotOwned naming the Job", res.Condition)
	}
}
