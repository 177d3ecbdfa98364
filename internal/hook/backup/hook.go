package backup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/hook"
)

const (
	// Name is how watches.yaml enables the hook.
	Name = "backup"
	// Condition is the condition type the hook owns: the outcome of the
	// newest finished backup Job.
	Condition = "BackedUp"
	// AnnotationBackupNow on a Database requests a backup now; each new value
	// is one more backup (a Job from the CronJob's template).
	AnnotationBackupNow = "rudder.dev/backup-now"
	// refresh is how often the Jobs' outcomes are looked at again: Jobs are
	// not watched.
	refresh = time.Minute
	// runningRefresh is how often they are looked at while a backup runs.
	runningRefresh = 10 * time.Second
)

// Hook keeps a Database's backup CronJob and volume and reports its backups.
type Hook struct {
	// Client writes the CronJob, Jobs and volume.
	Client client.Client
	// Reader reads them from the API server (they are not cached).
	Reader client.Reader

	tally tally // the backup metrics
}

var _ hook.Hook = (*Hook)(nil)

// Name implements hook.Hook.
func (*Hook) Name() string { return Name }

// Condition implements hook.Hook.
func (*Hook) Condition() string { return Condition }

// Defaults of spec.backup, as the database chart's values.schema.json declares them.
const (
	defaultSchedule    = "0 2 * * *"
	defaultStorageSize = "10Gi"
	defaultRetention   = 7
)

// specOf reads what the hook needs of a Database from values; enabled is spec.backup.enabled. Each string
// takes its default when unset or empty. A value of the wrong type, a backup.storageSize that is not a
// positive quantity or a backup.retention below 1 is a *hook.FieldError naming it.
func specOf(obj *unstructured.Unstructured, values map[string]any) (s spec, enabled bool, err error) {
	s = spec{name: obj.GetName(), namespace: obj.GetNamespace(), schedule: defaultSchedule,
		storageSize: resource.MustParse(defaultStorageSize), retention: defaultRetention}
	for _, f := range []struct {
		into *string
		path []string
	}{
		{&s.version, []string{"version"}},
		{&s.database, []string{"database"}},
		{&s.storageClass, []string{"storageClass"}},
		{&s.secretName, []string{"credentials", "secretName"}},
		{&s.usernameKey, []string{"credentials", "usernameKey"}},
		{&s.passwordKey, []string{"credentials", "passwordKey"}},
		{&s.schedule, []string{"backup", "schedule"}},
	} {
		v, _, err := hook.String(values, f.path...)
		if err != nil {
			return spec{}, false, err
		}
		if v != "" {
			*f.into = v
		}
	}
	size, found, err := hook.Quantity(values, "backup", "storageSize")
	if err != nil {
		return spec{}, false, err
	}
	if found {
		s.storageSize = size
	}
	retention, found, err := hook.Int(values, "backup", "retention")
	switch {
	case err != nil:
		return spec{}, false, err
	case found && (retention < 1 || retention > math.MaxInt32):
		return spec{}, false, &hook.FieldError{Field: "backup.retention", Problem: fmt.Sprintf(
			"%d is out of range: keep from 1 to %d backups", retention, math.MaxInt32)}
	case found:
		s.retention = retention
	}
	enabled, _, err = hook.Bool(values, "backup", "enabled")
	if err != nil {
		return spec{}, false, err
	}
	return s, enabled, nil
}

// Reconcile implements hook.Hook. With backups enabled it makes sure the
// volume and the CronJob exist as the spec says and runs a requested backup;
// disabled, it deletes the CronJob and keeps the volume with its dumps. Either
// way it reports the Jobs' outcomes. It acts only on its own objects: the
// CronJob and Jobs it made (controller reference) and the volume it made
// (hook.AnnotationGeneratedFor). Another object under one of their names is
// left alone, and the condition says so (hook.ReasonObjectNotOwned).
func (h *Hook) Reconcile(ctx context.Context, obj *unstructured.Unstructured, values map[string]any) (hook.Result, error) {
	s, enabled, err := specOf(obj, values)
	if err != nil {
		return hook.Result{}, err
	}
	var cj batchv1.CronJob
	err = h.Reader.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: s.objectName()}, &cj)
	switch {
	case apierrors.IsNotFound(err):
		cj = batchv1.CronJob{}
	case err != nil:
		return hook.Result{}, fmt.Errorf("reading CronJob %s: %w", s.objectName(), err)
	}
	ours := cj.Name != "" && hook.Controls(obj, &cj)
	if !enabled {
		// Another's CronJob under the name is no concern of disabled backups.
		if ours {
			err := hook.Acting(ctx, h.Client).Delete(ctx, &cj, client.Preconditions{UID: &cj.UID})
			if client.IgnoreNotFound(err) != nil {
				return hook.Result{}, fmt.Errorf("deleting CronJob %s: %w", cj.Name, err)
			}
		}
		return h.report(ctx, obj, s, false, cj.UID)
	}
	if cj.Name != "" && !ours {
		return notOwned(obj, "CronJob", cj.Name, false), nil
	}
	if c, err := h.ensureVolume(ctx, obj, s); err != nil || c != nil {
		return hook.Result{Condition: ptr.Deref(c, metav1.Condition{}), RequeueAfter: refresh}, err
	}
	if err := h.ensureCronJob(ctx, obj, s, &cj); err != nil {
		return hook.Result{}, err
	}
	if req := obj.GetAnnotations()[AnnotationBackupNow]; req != "" {
		if c, err := h.backupNow(ctx, obj, s, req); err != nil || c != nil {
			return hook.Result{Condition: ptr.Deref(c, metav1.Condition{}), RequeueAfter: refresh}, err
		}
	}
	return h.report(ctx, obj, s, true, cj.UID)
}

// notOwned is the result of a hook that leaves kind name alone: it runs no
// backup, and looks again, for the object may be gone by then.
func notOwned(obj *unstructured.Unstructured, kind, name string, kept bool) hook.Result {
	return hook.Result{Condition: hook.NotOwned(obj, kind, name, "runs no backup", kept), RequeueAfter: refresh}
}

// ensureVolume makes the backup volume when there is none; a claim of its
// name that is not obj's gives the condition that says so.
func (h *Hook) ensureVolume(ctx context.Context, obj *unstructured.Unstructured, s spec) (*metav1.Condition, error) {
	want := s.volumeClaim()
	var have corev1.PersistentVolumeClaim
	err := h.Reader.Get(ctx, client.ObjectKeyFromObject(want), &have)
	switch {
	case apierrors.IsNotFound(err):
		want.Annotations = map[string]string{hook.AnnotationGeneratedFor: hook.GeneratedFor(obj)}
		// Made by someone else since the read: the next reconcile looks at it.
		err = hook.Acting(ctx, h.Client).Create(ctx, want)
	case err == nil && !hook.IsGeneratedFor(obj, &have):
		return ptr.To(notOwned(obj, "PersistentVolumeClaim", have.Name, true).Condition), nil
	}
	if err != nil {
		return nil, fmt.Errorf("backup volume %s: %w", want.Name, err)
	}
	return nil, nil
}

// ensureCronJob makes the CronJob, or brings cj, obj's, to the spec.
func (h *Hook) ensureCronJob(ctx context.Context, obj *unstructured.Unstructured, s spec, cj *batchv1.CronJob) error {
	var err error
	switch {
	case cj.Name == "":
		*cj = batchv1.CronJob{
			ObjectMeta: metav1.ObjectMeta{Name: s.objectName(), Namespace: s.namespace, Labels: s.labels(),
				OwnerReferences: []metav1.OwnerReference{hook.OwnerReference(obj)}},
			Spec: s.cronJobSpec(),
		}
		err = hook.Acting(ctx, h.Client).Create(ctx, cj)
	case !equality.Semantic.DeepDerivative(s.cronJobSpec(), cj.Spec):
		cj.Spec = s.cronJobSpec()
		err = hook.Acting(ctx, h.Client).Update(ctx, cj)
	}
	if err != nil {
		return fmt.Errorf("CronJob %s: %w", s.objectName(), err)
	}
	return nil
}

// backupNow runs the backup requested by annotation value req, once: a Job
// of obj's that carries req already ran it. The Job's name, "<name>-now-<hash
// of req>", fits a Job's 63 characters for the longest Database name (44). A
// Job of that name that is not obj's gives the condition that says so.
func (h *Hook) backupNow(ctx context.Context, obj *unstructured.Unstructured, s spec, req string) (*metav1.Condition, error) {
	var jobs batchv1.JobList
	if err := h.Reader.List(ctx, &jobs, client.InNamespace(s.namespace), client.MatchingLabels{LabelBackupOf: s.name}); err != nil {
		return nil, fmt.Errorf("listing backup Jobs: %w", err)
	}
	for i := range jobs.Items {
		if j := &jobs.Items[i]; j.Annotations[AnnotationBackupNow] == req && hook.Controls(obj, j) {
			return nil, nil
		}
	}
	sum := sha256.Sum256([]byte(req))
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: s.name + "-now-" + hex.EncodeToString(sum[:])[:8], Namespace: s.namespace, Labels: s.labels(),
			Annotations:     map[string]string{AnnotationBackupNow: req},
			OwnerReferences: []metav1.OwnerReference{hook.OwnerReference(obj)},
		},
		Spec: s.jobSpec(),
	}
	err := hook.Acting(ctx, h.Client).Create(ctx, job)
	if apierrors.IsAlreadyExists(err) {
		var have batchv1.Job
		if err := h.Reader.Get(ctx, client.ObjectKeyFromObject(job), &have); err != nil {
			return nil, fmt.Errorf("reading backup Job %s: %w", job.Name, err)
		}
		if !hook.Controls(obj, &have) {
			return ptr.To(notOwned(obj, "Job", job.Name, false).Condition), nil
		}
		return nil, nil // obj's, made since the list
	}
	if err != nil {
		return nil, fmt.Errorf("backup Job %s: %w", job.Name, err)
	}
	return nil, nil
}

// ours reports whether j is one of obj's backup Jobs: made by the hook for
// obj, or by obj's CronJob (cronJob, its UID; "" when there is none).
func ours(obj *unstructured.Unstructured, cronJob types.UID, j *batchv1.Job) bool {
	ref := metav1.GetControllerOfNoCopy(j)
	return hook.Controls(obj, j) || (ref != nil && cronJob != "" && ref.UID == cronJob)
}

// report reads obj's backup Jobs (cronJob is its CronJob's UID, "" when
// there is none) and says how the newest finished one went. Jobs of others
// that carry the label are not obj's backups.
func (h *Hook) report(ctx context.Context, obj *unstructured.Unstructured, s spec, enabled bool, cronJob types.UID) (hook.Result, error) {
	var jobs batchv1.JobList
	if err := h.Reader.List(ctx, &jobs, client.InNamespace(s.namespace), client.MatchingLabels{LabelBackupOf: s.name}); err != nil {
		return hook.Result{}, fmt.Errorf("listing backup Jobs: %w", err)
	}
	jobs.Items = slices.DeleteFunc(jobs.Items, func(j batchv1.Job) bool { return !ours(obj, cronJob, &j) })
	schedule := ""
	if enabled {
		schedule = s.schedule
	}
	h.tally.observe(types.NamespacedName{Namespace: s.namespace, Name: s.name}, jobs.Items, schedule)
	var lastOK, lastFinished *batchv1.Job
	var lastOKAt, lastFinishedAt time.Time
	running := false
	for i := range jobs.Items {
		j := &jobs.Items[i]
		at, ok, finished := outcome(j)
		running = running || !finished
		if finished && at.After(lastFinishedAt) {
			lastFinished, lastFinishedAt = j, at
		}
		if ok && at.After(lastOKAt) {
			lastOK, lastOKAt = j, at
		}
	}
	res := hook.Result{Status: map[string]any{"lastBackup": nil, "backups": nil}}
	if lastOK != nil {
		res.Status["lastBackup"] = lastOKAt.UTC().Format(time.RFC3339)
		if kept := backupsOf(s.name, jobReport(ctx, h.Reader, lastOK)); kept != nil {
			res.Status["backups"] = kept
		}
	}
	c := &res.Condition
	switch {
	case lastFinished == nil && enabled:
		c.Status, c.Reason = metav1.ConditionUnknown, "NoBackupYet"
		c.Message = fmt.Sprintf("No backup has finished yet; CronJob %s runs on schedule %q", s.objectName(), s.schedule)
	case lastFinished == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, "BackupsDisabled", "Backups are disabled (spec.backup.enabled)"
	case lastFinished == lastOK:
		c.Status, c.Reason = metav1.ConditionTrue, "BackupSucceeded"
		c.Message = fmt.Sprintf("Backup Job %s completed at %s", lastOK.Name, lastOKAt.UTC().Format(time.RFC3339))
	default:
		c.Status, c.Reason = metav1.ConditionFalse, "BackupFailed"
		c.Message = fmt.Sprintf("Backup Job %s failed at %s: %s; see kubectl logs job/%s",
			lastFinished.Name, lastFinishedAt.UTC().Format(time.RFC3339), failure(lastFinished), lastFinished.Name)
	}
	switch {
	case running:
		res.RequeueAfter = runningRefresh
	case enabled:
		res.RequeueAfter = refresh
	}
	return res, nil
}

// outcome says whether a Job finished, whether it succeeded, and when.
func outcome(j *batchv1.Job) (at time.Time, ok, finished bool) {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			at = c.LastTransitionTime.Time
			if j.Status.CompletionTime != nil {
				at = j.Status.CompletionTime.Time
			}
			return at, true, true
		case batchv1.JobFailed:
			return c.LastTransitionTime.Time, false, true
		}
	}
	return time.Time{}, false, false
}

func failure(j *batchv1.Job) string {
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return c.Reason + ": " + c.Message
		}
	}
	return "failed"
}

// Finalize implements hook.Hook: under deletionPolicy Delete it deletes the
// Database's volumes — data and backups — once its release is gone;
// otherwise they stay, for a Database of the same name to find again. It
// deletes only claims that are obj's: the backup volume it made, and the data
// claims marked for obj or made by its StatefulSet (hook.MadeByRelease).
func (h *Hook) Finalize(ctx context.Context, obj *unstructured.Unstructured) error {
	h.tally.forget(types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()})
	if policy, _, _ := unstructured.NestedString(obj.Object, "spec", "deletionPolicy"); policy != "Delete" {
		return nil
	}
	for _, v := range []struct {
		sel     client.MatchingLabels
		release bool // made by the release's StatefulSet, not by the hook
	}{
		{client.MatchingLabels{LabelBackupOf: obj.GetName()}, false},
		{client.MatchingLabels{"app.kubernetes.io/instance": obj.GetName(), "app.kubernetes.io/name": "database"}, true},
	} {
		var claims corev1.PersistentVolumeClaimList
		if err := h.Reader.List(ctx, &claims, client.InNamespace(obj.GetNamespace()), v.sel); err != nil {
			return fmt.Errorf("listing the volumes of %s: %w", obj.GetName(), err)
		}
		for i := range claims.Items {
			c := &claims.Items[i]
			if ours := hook.IsGeneratedFor(obj, c) || v.release && hook.MadeByRelease(obj, c); !ours {
				continue // another's claim that carries the labels
			}
			if err := hook.Acting(ctx, h.Client).Delete(ctx, c, client.Preconditions{UID: &c.UID}); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting volume %s of %s: %w", c.Name, obj.GetName(), err)
			}
		}
	}
	return nil
}
