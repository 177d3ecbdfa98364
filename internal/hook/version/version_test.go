package version

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestTag(t *testing.T) {
	tests := []struct{ image, want string }{
		{"postgres:16", "16"},
		{"postgres:15.6-bookworm", "15.6-bookworm"},
		{"registry:5000/postgres", "latest"},
		{"registry:5000/postgres:16", "16"},
		{"postgres@sha256:abc", "sha256:abc"},
		{"postgres", "latest"},
	}
	for _, tt := range tests {
		t.Run(tt.image, func(t *testing.T) {
			if got := tag(tt.image); got != tt.want {
				t.Errorf("tag(%q) = %q, want %q", tt.image, got, tt.want)
			}
		})
	}
}

func pod(name, image string, ready bool) *corev1.Pod {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"app": "db"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "postgres", Image: image}}},
		Status:     corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}},
	}
}

// The hook only reads pods; a fake client serves its pure logic here. The
// Database end-to-end test runs it against real pods.
func TestHook_Reconcile(t *testing.T) {
	tests := []struct {
		name        string
		pods        []*corev1.Pod
		wantVersion any
		wantCurrent int64
		wantStatus  metav1.ConditionStatus
		wantMessage string
	}{
		{name: "no pods", wantVersion: nil, wantStatus: metav1.ConditionFalse, wantMessage: "No pod is ready yet"},
		{name: "one ready pod on the wanted version", pods: []*corev1.Pod{pod("db-0", "postgres:16", true)},
			wantVersion: "16", wantCurrent: 1, wantStatus: metav1.ConditionTrue, wantMessage: "Every ready pod runs version 16"},
		{name: "a pod not ready does not count", pods: []*corev1.Pod{pod("db-0", "postgres:16", true), pod("db-1", "postgres:15", false)},
			wantVersion: "16", wantCurrent: 2, wantStatus: metav1.ConditionTrue, wantMessage: "Every ready pod runs version 16"},
		{name: "mid-rollout", pods: []*corev1.Pod{pod("db-0", "postgres:16", true), pod("db-1", "postgres:15", true), pod("db-2", "postgres:15", true)},
			wantVersion: "15 (2), 16 (1)", wantCurrent: 3, wantStatus: metav1.ConditionFalse, wantMessage: "Ready pods run 15 (2), 16 (1); wanted 16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(scheme.Scheme)
			for _, p := range tt.pods {
				b = b.WithObjects(p)
			}
			h := &Hook{Reader: b.Build(), Container: "postgres"}
			db := &unstructured.Unstructured{}
			db.SetNamespace("ns")
			db.SetName("db")
			res, err := h.Reconcile(context.Background(), db, map[string]any{"version": "16"})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Status["currentVersion"]; got != tt.wantVersion {
				t.Errorf("currentVersion = %v, want %v", got, tt.wantVersion)
			}
			if got := res.Status["currentReplicas"]; got != tt.wantCurrent {
				t.Errorf("currentReplicas = %v, want %d", got, tt.wantCurrent)
			}
			if res.Condition.Status != tt.wantStatus || res.Condition.Message != tt.wantMessage {
				t.Errorf("condition = %s %q, want %s %q", res.Condition.Status, res.Condition.Message, tt.wantStatus, tt.wantMessage)
			}
		})
	}
}

// A spec.version that is not a string (an override of 16 without quotes) is an
// error naming the field, not a silent "".
func TestHook_Reconcile_VersionNotAString(t *testing.T) {
	h := &Hook{Reader: fake.NewClientBuilder().WithScheme(scheme.Scheme).Build(), Container: "postgres"}
	db := &unstructured.Unstructured{}
	db.SetNamespace("ns")
	db.SetName("db")
	_, err := h.Reconcile(context.Background(), db, map[string]any{"version": int64(16)})
	want := `spec.version: got the number 16, want a string (put it in quotes, such as "16")`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}
