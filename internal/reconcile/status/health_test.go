package status

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func deployment(name string, spec, replicas, ready int64) *unstructured.Unstructured {
	available := "False"
	if ready == spec {
		available = "True"
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "generation": int64(1)},
		"spec":     map[string]any{"replicas": spec},
		"status": map[string]any{
			"observedGeneration": int64(1), "replicas": replicas, "updatedReplicas": replicas,
			"readyReplicas": ready, "availableReplicas": ready,
			"conditions": []any{map[string]any{"type": "Available", "status": available}},
		},
	}}
}

func configMap(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name},
	}}
}

func TestHealthOf(t *testing.T) {
	tests := []struct {
		name        string
		states      []ObjectState
		wantReady   bool
		wantSummary string
		wantMessage string // substring of the message
	}{
		{
			name:        "all replicas ready",
			states:      []ObjectState{{Want: deployment("web", 3, 3, 3), Live: new(OfObject(deployment("web", 3, 3, 3)))}, {Want: configMap("c"), Live: new(OfObject(configMap("c")))}},
			wantReady:   true,
			wantSummary: "All replicas are ready",
		},
		{
			name:        "no workloads",
			states:      []ObjectState{{Want: configMap("a"), Live: new(OfObject(configMap("a")))}, {Want: configMap("b"), Live: new(OfObject(configMap("b")))}},
			wantReady:   true,
			wantSummary: "All 2 objects are ready",
		},
		{
			name:        "replicas not ready, the Deployment is named",
			states:      []ObjectState{{Want: deployment("web", 5, 5, 2), Live: new(OfObject(deployment("web", 5, 5, 2)))}},
			wantSummary: "2/5 replicas ready",
			wantMessage: "Deployment/web",
		},
		{
			name:        "missing object named",
			states:      []ObjectState{{Want: configMap("a"), Live: new(OfObject(configMap("a")))}, {Want: configMap("gone")}},
			wantSummary: "ConfigMap/gone does not exist yet",
			wantMessage: "ConfigMap/gone does not exist yet",
		},
		{
			name:        "unreadable object named",
			states:      []ObjectState{{Want: configMap("x"), Err: errors.New("forbidden")}},
			wantSummary: "ConfigMap/x cannot be read: forbidden",
			wantMessage: "forbidden",
		},
		{
			// The cache still holds the Deployment as it was before the
			// upgrade to 4 replicas: ready, but not the revision's.
			name:        "ready but not the deployed revision's yet",
			states:      []ObjectState{{Want: deployment("web", 4, 0, 0), Live: new(OfObject(deployment("web", 3, 3, 3))), Differs: true}},
			wantSummary: "3/3 replicas ready",
			wantMessage: "Deployment/web does not match the deployed revision yet",
		},
		{
			name: "first holding back is named",
			states: []ObjectState{
				{Want: deployment("a", 1, 1, 0), Live: new(OfObject(deployment("a", 1, 1, 0)))},
				{Want: deployment("b", 2, 2, 0), Live: new(OfObject(deployment("b", 2, 2, 0)))},
			},
			wantSummary: "0/3 replicas ready",
			wantMessage: "Deployment/a",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := HealthOf(tt.states)
			if h.Ready != tt.wantReady {
				t.Errorf("ready = %v, want %v (%s)", h.Ready, tt.wantReady, h.Message)
			}
			if got := h.summary(); got != tt.wantSummary {
				t.Errorf("summary = %q, want %q", got, tt.wantSummary)
			}
			if !strings.Contains(h.Message, tt.wantMessage) {
				t.Errorf("message %q does not contain %q", h.Message, tt.wantMessage)
			}
		})
	}
}
