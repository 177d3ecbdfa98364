package version

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/hook"
)

const (
	// Name is how watches.yaml enables the hook.
	Name = "version"
	// Condition is the condition type the hook owns.
	Condition = "VersionCurrent"
)

// Hook reads the pods labeled app=<resource name> and reports the image tag
// their Container runs against the wanted .spec.version.
type Hook struct {
	// Reader lists pods from the API server (pods are not cached).
	Reader client.Reader
	// Container is the name of the container whose image tag is the version.
	Container string
}

var _ hook.Hook = (*Hook)(nil)

// Name implements hook.Hook.
func (*Hook) Name() string { return Name }

// Condition implements hook.Hook.
func (*Hook) Condition() string { return Condition }

// Reconcile implements hook.Hook.
func (h *Hook) Reconcile(ctx context.Context, obj *unstructured.Unstructured, values map[string]any) (hook.Result, error) {
	want, err := wantedVersion(values)
	if err != nil {
		return hook.Result{}, err
	}
	var pods corev1.PodList
	err = h.Reader.List(ctx, &pods, client.InNamespace(obj.GetNamespace()), client.MatchingLabels{"app": obj.GetName()})
	if err != nil {
		return hook.Result{}, fmt.Errorf("listing pods: %w", err)
	}
	versions := map[string]int{} // of ready pods
	for i := range pods.Items {
		if v, ok := h.readyVersion(&pods.Items[i]); ok {
			versions[v]++
		}
	}
	status := map[string]any{"currentReplicas": int64(len(pods.Items)), "currentVersion": summary(versions)}
	if len(versions) == 0 {
		status["currentVersion"] = nil
	}
	cond := metav1.Condition{Status: metav1.ConditionTrue, Reason: "AllPodsCurrent",
		Message: fmt.Sprintf("Every ready pod runs version %s", want)}
	switch {
	case len(versions) == 0:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "NoReadyPods", "No pod is ready yet"
	case len(versions) > 1 || versions[want] == 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, "VersionsDiffer"
		cond.Message = fmt.Sprintf("Ready pods run %s; wanted %s", summary(versions), want)
	}
	return hook.Result{Status: status, Condition: cond}, nil
}

// wantedVersion reads spec.version from values: the version every ready pod should run, "" when unset. A value
// of the wrong type is a *hook.FieldError naming it.
func wantedVersion(values map[string]any) (string, error) {
	v, _, err := hook.String(values, "version")
	return v, err
}

// Finalize implements hook.Hook; the hook leaves nothing behind.
func (*Hook) Finalize(context.Context, *unstructured.Unstructured) error { return nil }

// readyVersion returns the image tag of the hook's container in a ready pod.
func (h *Hook) readyVersion(pod *corev1.Pod) (string, bool) {
	ready := false
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	if !ready || pod.DeletionTimestamp != nil {
		return "", false
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == h.Container {
			return tag(c.Image), true
		}
	}
	return "", false
}

// tag returns the tag of an image reference ("postgres:16.2" → "16.2"),
// "latest" when it has none; a digest is kept as it is.
func tag(image string) string {
	if i := strings.LastIndex(image, "@"); i >= 0 {
		return image[i+1:]
	}
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		return image[i+1:]
	}
	return "latest"
}

// summary lists versions, most common first: "16" or "16 (2), 15 (1)".
func summary(versions map[string]int) string {
	if len(versions) == 1 {
		for v := range versions {
			return v
		}
	}
	keys := make([]string, 0, len(versions))
	for v := range versions {
		keys = append(keys, v)
	}
	sort.Slice(keys, func(i, j int) bool {
		if versions[keys[i]] != versions[keys[j]] {
			return versions[keys[i]] > versions[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, v := range keys {
		parts[i] = fmt.Sprintf("%s (%d)", v, versions[v])
	}
	return strings.Join(parts, ", ")
}
