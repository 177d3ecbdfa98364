package backup

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/hook"
)

const (
	// RestoreName is how watches.yaml enables the restore hook.
	RestoreName = "restore"
	// RestoreCondition is the condition type the restore hook owns: where the
	// restore spec.restore asks for stands. The Database is not Ready before
	// it is True.
	RestoreCondition = "Restored"
	// AnnotationRestoredFrom on the claim data-<name>-0 records, as
	// "<source>/<dump>", that its data was restored. The claim outlives the
	// Database, so a Database created again over it is not restored twice.
	AnnotationRestoredFrom = "rudder.dev/restored-from"
	// AnnotationRestoredAt on the claim is when the restore completed.
	AnnotationRestoredAt = "rudder.dev/restored-at"
	// restoreWaitSeconds is how long a restore Job waits for the new server:
	// it starts with the release, before the server's first start is over.
	restoreWaitSeconds = 600
	// restorePoll is how often a restore under way is looked at again: Jobs
	// are not watched.
	restorePoll = 10 * time.Second
	// claimPoll is how often a restore waiting for its claim looks again:
	// claims are not watched, and the StatefulSet makes it within seconds.
	claimPoll = 3 * time.Second
	// ReasonCrossNamespaceRef is the Restored condition's reason when
	// spec.restore.from names a Database of another namespace: a restore Job
	// mounts the source's backup claim, and a pod mounts only claims of its
	// own namespace, so no manager flag allows it.
	ReasonCrossNamespaceRef = "CrossNamespaceRef"
)

// Restore loads a new Database's data, once, from a dump on the backup
// volume of another Database (spec.restore), with RestoreScript in a Job.
// It blocks Ready until the data is in.
type Restore struct {
	// Client writes the Job and the claim's annotations.
	Client client.Client
	// Reader reads Jobs, pods and claims from the API server.
	Reader client.Reader
}

var _ hook.Hook = (*Restore)(nil)

// Name implements hook.Hook.
func (*Restore) Name() string { return RestoreName }

// Condition implements hook.Hook.
func (*Restore) Condition() string { return RestoreCondition }

// restoreRequest is what spec.restore asks for.
type restoreRequest struct {
	from, backup string
}

// restoreRequestOf reads spec.restore from values; requested is false when spec.restore.from is unset or
// empty. The backup is "latest" when unset or empty. A value of the wrong type is a *hook.FieldError naming it.
func restoreRequestOf(values map[string]any) (req restoreRequest, requested bool, err error) {
	from, _, err := hook.String(values, "restore", "from")
	if err != nil {
		return restoreRequest{}, false, err
	}
	backup, _, err := hook.String(values, "restore", "backup")
	if err != nil {
		return restoreRequest{}, false, err
	}
	if backup == "" {
		backup = "latest"
	}
	return restoreRequest{from: from, backup: backup}, from != "", nil
}

func (s spec) dataClaim() string  { return "data-" + s.name + "-0" }
func (s spec) restoreJob() string { return s.name + "-restore" }

// Reconcile implements hook.Hook. It never blocks the release: the server
// the dump is loaded into is the release's.
func (h *Restore) Reconcile(ctx context.Context, obj *unstructured.Unstructured, values map[string]any) (hook.Result, error) {
	req, requested, err := restoreRequestOf(values)
	if err != nil {
		return hook.Result{}, err
	}
	if !requested {
		return hook.Result{
			Status:    map[string]any{"restore": nil},
			Condition: metav1.Condition{Status: metav1.ConditionTrue, Reason: "NotRequested", Message: "spec.restore is not set: the Database started empty"},
		}, nil
	}
	if ns, name, ok := strings.Cut(req.from, "/"); ok {
		if ns != obj.GetNamespace() {
			// Nothing of the other namespace is read: the message says only what was asked.
			return pending(req, ReasonCrossNamespaceRef, fmt.Sprintf("spec.restore.from: %q names another namespace; "+
				"a Database restores only from a Database of its own namespace (a Job mounts only claims of its own namespace): "+
				"delete this Database and create it again with spec.restore.from naming one of namespace %s", req.from, obj.GetNamespace()), 0), nil
		}
		req.from = name
	}
	s, _, err := specOf(obj, values)
	if err != nil {
		return hook.Result{}, err
	}

	var claim corev1.PersistentVolumeClaim
	err = h.Reader.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: s.dataClaim()}, &claim)
	switch {
	case apierrors.IsNotFound(err), err == nil && claim.DeletionTimestamp != nil:
		// The StatefulSet has not made it yet, or it is going with its data.
		claim = corev1.PersistentVolumeClaim{}
	case err != nil:
		return hook.Result{}, fmt.Errorf("reading claim %s: %w", s.dataClaim(), err)
	case claim.Annotations[AnnotationRestoredFrom] != "" && (hook.IsGeneratedFor(obj, &claim) || hook.MadeByRelease(obj, &claim)):
		// Restored for this Database, or for one of its name before (kept):
		// another's claim's record is not taken at its word.
		return restored(claim), nil
	case claim.CreationTimestamp.Before(ptr.To(obj.GetCreationTimestamp())):
		return pending(req, "DataExists", fmt.Sprintf("Not restored: claim %s holds data from before this Database was created, "+
			"and rudder never restores over data. To restore into an empty database, delete this Database and the claim, "+
			"then create the Database again", s.dataClaim()), 0), nil
	}

	var source corev1.PersistentVolumeClaim
	err = hook.Reading(ctx, h.Reader).Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: req.from + "-backup"}, &source)
	if err == nil && hook.GeneratedForName(&source) != obj.GetKind()+"/"+req.from {
		return pending(req, hook.ReasonObjectNotOwned, fmt.Sprintf("spec.restore.from: claim %s was not made by rudder's backup hook "+
			"for Database %s, so rudder does not restore from it; name a Database with backups (spec.backup.enabled)",
			source.Name, req.from), time.Minute), nil
	}
	if apierrors.IsNotFound(err) {
		return pending(req, "SourceNotFound", fmt.Sprintf("spec.restore.from: Database %q has no backup volume %s-backup in namespace %s; "+
			"enable its spec.backup and take a backup (annotate it %s=<any new value>)", req.from, req.from, s.namespace, AnnotationBackupNow),
			30*time.Second), nil
	}
	if err != nil {
		return hook.Result{}, fmt.Errorf("reading backup volume %s-backup: %w", req.from, err)
	}

	var job batchv1.Job
	err = h.Reader.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: s.restoreJob()}, &job)
	if apierrors.IsNotFound(err) && claim.Name == "" {
		// The Job starts once the release's StatefulSet has made the claim it
		// loads into: a Job that finished before then (a manager down in
		// between) would have loaded nothing anyone keeps.
		return pending(req, "WaitingForClaim", fmt.Sprintf("Waiting for the StatefulSet to create claim %s; the restore Job starts then",
			s.dataClaim()), claimPoll), nil
	}
	if apierrors.IsNotFound(err) {
		job = s.newRestoreJob(obj, req)
		if err := client.IgnoreAlreadyExists(hook.Acting(ctx, h.Client).Create(ctx, &job)); err != nil {
			return hook.Result{}, fmt.Errorf("restore Job %s: %w", job.Name, err)
		}
		return pending(req, "Restoring", fmt.Sprintf("Job %s started: loading %s of Database %s", job.Name, req.backup, req.from), restorePoll), nil
	}
	if err != nil {
		return hook.Result{}, fmt.Errorf("reading restore Job %s: %w", s.restoreJob(), err)
	}
	if !hook.Controls(obj, &job) {
		c := hook.NotOwned(obj, "Job", job.Name, "does not restore", false)
		return pending(req, c.Reason, c.Message, time.Minute), nil
	}
	at, ok, finished := outcome(&job)
	switch {
	case !finished:
		return pending(req, "Restoring", fmt.Sprintf("Job %s is loading %s of Database %s", job.Name, req.backup, req.from), restorePoll), nil
	case !ok:
		res := pending(req, "RestoreFailed", fmt.Sprintf("Job %s failed: %s; see kubectl logs job/%s, then delete the Job to try again",
			job.Name, failure(&job), job.Name), time.Minute)
		res.Status["restore"].(map[string]any)["phase"] = "Failed"
		return res, nil
	}
	if claim.Name == "" {
		// Not an error: the release must go on and make the claim again.
		res := pending(req, "RestoreLost", fmt.Sprintf("Job %s succeeded but claim %s, which it loaded, is gone; "+
			"delete the Job to restore again into the new claim", job.Name, s.dataClaim()), time.Minute)
		res.Status["restore"].(map[string]any)["phase"] = "Failed"
		return res, nil
	}
	dump := jobReport(ctx, h.Reader, &job)
	if dump == "" {
		dump = req.backup
	}
	patch := client.MergeFrom(claim.DeepCopy())
	if claim.Annotations == nil {
		claim.Annotations = map[string]string{}
	}
	claim.Annotations[AnnotationRestoredFrom] = req.from + "/" + dump
	claim.Annotations[AnnotationRestoredAt] = at.UTC().Format(time.RFC3339)
	claim.Annotations[hook.AnnotationGeneratedFor] = hook.GeneratedFor(obj) // made by its StatefulSet, after it
	if err := hook.Acting(ctx, h.Client).Patch(ctx, &claim, patch); err != nil {
		return hook.Result{}, fmt.Errorf("recording the restore on claim %s: %w", claim.Name, err)
	}
	return restored(claim), nil
}

// Finalize implements hook.Hook. The restore Job is owned by the Database;
// the claim's record of the restore stays with the claim.
func (*Restore) Finalize(context.Context, *unstructured.Unstructured) error { return nil }

// newRestoreJob runs RestoreScript against the new Database's server, with
// the source's backup volume mounted read-only. Owned by the Database.
func (s spec) newRestoreJob(obj *unstructured.Unstructured, req restoreRequest) batchv1.Job {
	labels := s.labels()
	delete(labels, LabelBackupOf) // not a backup: the backup hook must not count it
	labels["app.kubernetes.io/component"] = "restore"
	spec := s.scriptJob("restore", RestoreScript(), req.from+"-backup", true,
		corev1.EnvVar{Name: EnvPrefix, Value: req.from},
		corev1.EnvVar{Name: EnvRestoreFile, Value: req.backup},
		corev1.EnvVar{Name: EnvReportFile, Value: corev1.TerminationMessagePathDefault},
		corev1.EnvVar{Name: EnvWaitSeconds, Value: fmt.Sprint(restoreWaitSeconds)},
	)
	spec.Template.Labels = labels
	return batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: s.restoreJob(), Namespace: s.namespace, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{hook.OwnerReference(obj)}},
		Spec: spec,
	}
}

// pending is the result of a restore not done: Ready waits for it.
func pending(req restoreRequest, reason, message string, poll time.Duration) hook.Result {
	phase := "Running"
	if reason != "Restoring" {
		phase = "Pending"
	}
	return hook.Result{
		Status:       map[string]any{"restore": map[string]any{"source": req.from, "backup": req.backup, "phase": phase}},
		Condition:    metav1.Condition{Status: metav1.ConditionFalse, Reason: reason, Message: message},
		BlocksReady:  true,
		RequeueAfter: poll,
	}
}

// restored is the result of a restore recorded on claim.
func restored(claim corev1.PersistentVolumeClaim) hook.Result {
	source, dump, _ := strings.Cut(claim.Annotations[AnnotationRestoredFrom], "/")
	st := map[string]any{"source": source, "backup": dump, "phase": "Succeeded"}
	if at := claim.Annotations[AnnotationRestoredAt]; at != "" {
		st["completed"] = at
	}
	return hook.Result{
		Status: map[string]any{"restore": st},
		Condition: metav1.Condition{Status: metav1.ConditionTrue, Reason: "Restored",
			Message: fmt.Sprintf("Restored %s of Database %s into claim %s", dump, source, claim.Name)},
		BlocksReady: true,
	}
}

var _ hook.StatusSchemer = (*Restore)(nil)

// StatusSchema implements hook.StatusSchemer: the key Reconcile writes.
func (*Restore) StatusSchema() map[string]apiextensionsv1.JSONSchemaProps {
	str := func(d string) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "string", Description: d}
	}
	completed := str("When the restore completed.")
	completed.Format = "date-time"
	return map[string]apiextensionsv1.JSONSchemaProps{
		"restore": {
			Description: "Progress of the restore that spec.restore asked for.",
			Type:        "object",
			Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"source":    str("The Database the backup came from (spec.restore.from)."),
				"backup":    str(`The backup file loaded; the actual file once done when spec.restore.backup is "latest".`),
				"phase":     str("Where the restore stands: Pending, Running, Succeeded or Failed."),
				"completed": completed,
			},
		},
	}
}
