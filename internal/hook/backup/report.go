package backup

import (
	"context"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// jobReport is what the script of a succeeded Job reported (EnvReportFile):
// the termination message of its succeeded pod, or "" when there is none.
func jobReport(ctx context.Context, r client.Reader, job *batchv1.Job) string {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(job.Namespace), client.MatchingLabels{batchv1.JobNameLabel: job.Name}); err != nil {
		return ""
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if ref := metav1.GetControllerOfNoCopy(p); ref == nil || ref.UID != job.UID || p.Status.Phase != corev1.PodSucceeded {
			continue // another's pod that carries the label, or not done
		}
		for _, c := range p.Status.ContainerStatuses {
			if t := c.State.Terminated; t != nil && t.Message != "" {
				return t.Message
			}
		}
	}
	return ""
}

// backupsOf turns a backup Job's report, the dumps of prefix kept, into
// status.backups, newest first; nil when the report names none.
func backupsOf(prefix, report string) []any {
	var out []any
	for _, name := range strings.Fields(report) {
		at, ok := ParseDumpTime(prefix, name)
		if !ok {
			continue // a line cut by the message's size limit, or not a dump
		}
		out = append([]any{map[string]any{"name": name, "completed": at.UTC().Format(time.RFC3339)}}, out...)
	}
	return out
}
