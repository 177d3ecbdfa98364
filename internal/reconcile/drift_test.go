package reconcile

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestDrifted(t *testing.T) {
	want := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "a", "labels": map[string]any{"app": "a"}},
		"spec": map[string]any{
			"replicas": int64(3),
			"template": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "c", "image": "nginx:1.25",
					"resources": map[string]any{"limits": map[string]any{"cpu": "0.5"}}, "env": []any{}}},
			}},
		},
		"status": map[string]any{"replicas": int64(3)},
	}
	live := func(edit func(m map[string]any)) map[string]any {
		m := map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "a", "uid": "u", "labels": map[string]any{"app": "a", "extra": "x"},
				"annotations": map[string]any{"meta.helm.sh/release-name": "r"}},
			"spec": map[string]any{
				"replicas": int64(3), "progressDeadlineSeconds": int64(600),
				"template": map[string]any{"spec": map[string]any{
					"containers": []any{map[string]any{"name": "c", "image": "nginx:1.25", "terminationMessagePath": "/dev/x",
						"resources": map[string]any{"limits": map[string]any{"cpu": "500m"}}}},
				}},
			},
			"status": map[string]any{"replicas": int64(1)},
		}
		if edit != nil {
			edit(m)
		}
		return m
	}
	spec := func(m map[string]any) map[string]any { return m["spec"].(map[string]any) }
	container := func(m map[string]any) map[string]any {
		return spec(m)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	}
	tests := []struct {
		name string
		live map[string]any
		want bool
	}{
		{name: "defaults, extra labels, other status and equal quantities are no drift", live: live(nil), want: false},
		{name: "image edited", live: live(func(m map[string]any) { container(m)["image"] = "evil" }), want: true},
		{name: "replicas edited", live: live(func(m map[string]any) { spec(m)["replicas"] = int64(9) }), want: true},
		{name: "replicas as float equal", live: live(func(m map[string]any) { spec(m)["replicas"] = float64(3) }), want: false},
		{name: "label removed", live: live(func(m map[string]any) { m["metadata"].(map[string]any)["labels"] = map[string]any{} }), want: true},
		{name: "container added", live: live(func(m map[string]any) {
			c := spec(m)["template"].(map[string]any)["spec"].(map[string]any)
			c["containers"] = append(c["containers"].([]any), map[string]any{"name": "sidecar"})
		}), want: true},
		{name: "cpu limit changed", live: live(func(m map[string]any) {
			container(m)["resources"].(map[string]any)["limits"].(map[string]any)["cpu"] = "1"
		}), want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := drifted(&unstructured.Unstructured{Object: want}, &unstructured.Unstructured{Object: tt.live})
			if got != tt.want {
				t.Errorf("drifted = %v, want %v", got, tt.want)
			}
		})
	}
}
