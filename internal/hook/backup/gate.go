package backup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/hook"
)

// AnnotationUpgradeWithoutBackup set to a version on a Database lets the
// upgrade to that version go ahead without the backup before it: once, as the
// next change of version is gated again.
const AnnotationUpgradeWithoutBackup = "rudder.dev/upgrade-without-backup"

// annotationBeforeUpgrade marks a backup Job the gate ran: "16 → 17".
const annotationBeforeUpgrade = "rudder.dev/before-upgrade"

// Reasons of the Released condition while the gate holds an upgrade.
const (
	ReasonBackingUp    = "BackingUpBeforeUpgrade"
	ReasonBackupFailed = "BackupBeforeUpgradeFailed"
)

var _ hook.Gate = (*Hook)(nil)

// BeforeUpgrade implements hook.Gate: with backups enabled, a change of
// spec.version (a minor version: the database restarts on another build)
// waits for a backup Job of its own, started here, to complete. A failed backup holds
// the upgrade until the Job is deleted (another try) or the annotation
// AnnotationUpgradeWithoutBackup names the version.
func (h *Hook) BeforeUpgrade(ctx context.Context, obj *unstructured.Unstructured, deployed []*unstructured.Unstructured, values map[string]any) (hook.GateResult, error) {
	s, enabled, err := specOf(obj, values)
	if err != nil {
		return hook.GateResult{}, err
	}
	from := deployedVersion(deployed)
	if !enabled || from == "" || from == s.version || obj.GetAnnotations()[AnnotationUpgradeWithoutBackup] == s.version {
		return hook.GateResult{Open: true}, nil
	}
	change := fmt.Sprintf("%s → %s", from, s.version)
	sum := sha256.Sum256([]byte(string(obj.GetUID()) + "/" + change))
	job := &batchv1.Job{}
	// <name>-pre-<hash>: at most 57 characters for a Database name of 44,
	// within the 63 a Job's name may have.
	key := client.ObjectKey{Namespace: s.namespace, Name: s.name + "-pre-" + hex.EncodeToString(sum[:])[:8]}
	err = h.Reader.Get(ctx, key, job)
	if apierrors.IsNotFound(err) {
		job = &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: s.labels(),
				Annotations:     map[string]string{annotationBeforeUpgrade: change},
				OwnerReferences: []metav1.OwnerReference{hook.OwnerReference(obj)}},
			Spec: s.jobSpec(),
		}
		err = client.IgnoreAlreadyExists(hook.Acting(ctx, h.Client).Create(ctx, job))
	}
	if err != nil {
		return hook.GateResult{}, fmt.Errorf("backup Job %s before the upgrade from version %s: %w", key.Name, change, err)
	}
	if !hook.Controls(obj, job) {
		c := hook.NotOwned(obj, "Job", key.Name, "cannot back up before the upgrade from version "+change, false)
		return hook.GateResult{Reason: c.Reason, Message: c.Message + "; the upgrade waits (annotate " +
			AnnotationUpgradeWithoutBackup + "=" + s.version + " to upgrade without a backup)", Failed: true,
			RequeueAfter: refresh}, nil
	}
	at, ok, finished := outcome(job)
	switch {
	case ok:
		return hook.GateResult{Open: true}, nil
	case finished:
		return hook.GateResult{Reason: ReasonBackupFailed, Failed: true, Message: fmt.Sprintf(
			"Backup Job %s failed at %s before the upgrade from version %s: %s; the upgrade waits. See kubectl logs job/%s; "+
				"delete the Job to back up again, or annotate %s=%s to upgrade without a backup",
			key.Name, at.UTC().Format("2006-01-02T15:04:05Z"), change, failure(job), key.Name, AnnotationUpgradeWithoutBackup, s.version)}, nil
	default:
		return hook.GateResult{Reason: ReasonBackingUp, RequeueAfter: runningRefresh, Message: fmt.Sprintf(
			"Backing up before the upgrade from version %s: Job %s runs; the upgrade follows once it completes (annotate %s=%s to upgrade without it)",
			change, key.Name, AnnotationUpgradeWithoutBackup, s.version)}, nil
	}
}

// deployedVersion is the version the deployed revision runs: the tag of the
// postgres container's image in its StatefulSet; "" when there is none.
func deployedVersion(objs []*unstructured.Unstructured) string {
	for _, o := range objs {
		if o.GetKind() != "StatefulSet" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			m, _ := c.(map[string]any)
			if m["name"] != "postgres" {
				continue
			}
			image, _ := m["image"].(string)
			if i := strings.LastIndex(image, ":"); i >= 0 && !strings.Contains(image[i:], "/") {
				return image[i+1:]
			}
		}
	}
	return ""
}
