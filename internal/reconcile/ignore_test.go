package reconcile

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rudder-operator/rudder/internal/watches"
)

func TestIgnoring(t *testing.T) {
	deployment := func(replicas int64, image string, resources map[string]any) *unstructured.Unstructured {
		c := map[string]any{"name": "c", "image": image}
		if resources != nil {
			c["resources"] = resources
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"},
			"spec": map[string]any{"replicas": replicas, "template": map[string]any{"spec": map[string]any{
				"containers": []any{c}}}},
		}}
	}
	rule := func(kind, name string, paths ...string) watches.DriftIgnore {
		ig := watches.DriftIgnore{Kind: kind, Name: name}
		for _, s := range paths {
			p, err := watches.ParsePointer(s)
			if err != nil {
				t.Fatal(err)
			}
			ig.Paths = append(ig.Paths, p)
		}
		return ig
	}
	cpu := func(q string) map[string]any { return map[string]any{"requests": map[string]any{"cpu": q}} }
	tests := []struct {
		name        string
		rules       []watches.DriftIgnore
		want, live  *unstructured.Unstructured
		wantDrifted bool
	}{
		{name: "no rule: replicas scaled is drift",
			want: deployment(2, "a", nil), live: deployment(5, "a", nil), wantDrifted: true},
		{name: "replicas ignored",
			rules: []watches.DriftIgnore{rule("", "", "/spec/replicas")},
			want:  deployment(2, "a", nil), live: deployment(5, "a", nil)},
		{name: "replicas ignored, image edited is still drift",
			rules: []watches.DriftIgnore{rule("Deployment", "", "/spec/replicas")},
			want:  deployment(2, "a", nil), live: deployment(5, "b", nil), wantDrifted: true},
		{name: "a rule for another kind does not apply",
			rules: []watches.DriftIgnore{rule("StatefulSet", "", "/spec/replicas")},
			want:  deployment(2, "a", nil), live: deployment(5, "a", nil), wantDrifted: true},
		{name: "a rule for another name does not apply",
			rules: []watches.DriftIgnore{rule("Deployment", "api", "/spec/replicas")},
			want:  deployment(2, "a", nil), live: deployment(5, "a", nil), wantDrifted: true},
		{name: "inside a list element, changed",
			rules: []watches.DriftIgnore{rule("", "web", "/spec/template/spec/containers/0/resources")},
			want:  deployment(2, "a", cpu("1")), live: deployment(2, "a", cpu("2"))},
		{name: "inside a list element, removed by the other controller",
			rules: []watches.DriftIgnore{rule("", "", "/spec/template/spec/containers/0/resources")},
			want:  deployment(2, "a", cpu("1")), live: deployment(2, "a", nil)},
		{name: "a whole list element",
			rules: []watches.DriftIgnore{rule("", "", "/spec/template/spec/containers/0")},
			want:  deployment(2, "a", nil), live: deployment(2, "b", nil)},
		{name: "a path neither has",
			rules: []watches.DriftIgnore{rule("", "", "/spec/paused", "/spec/template/spec/containers/3/image", "/spec/replicas/x")},
			want:  deployment(2, "a", nil), live: deployment(2, "a", nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.want.DeepCopy()
			got := ignoring(watches.Drift{Ignore: tt.rules}, tt.want, tt.live)
			if d := drifted(got, tt.live); d != tt.wantDrifted {
				t.Errorf("drifted = %v, want %v; compared %v with %v", d, tt.wantDrifted, got.Object, tt.live.Object)
			}
			if !equalObjects(tt.want, before) {
				t.Errorf("ignoring changed the revision's object: %v, was %v", tt.want.Object, before.Object)
			}
		})
	}

	// A list shorter in live: the element is dropped from the compared and
	// patched object, not left as a null a patch would send.
	want := deployment(2, "a", nil)
	spec := want.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	spec["containers"] = append(spec["containers"].([]any), map[string]any{"name": "sidecar"})
	got := ignoring(watches.Drift{Ignore: []watches.DriftIgnore{rule("", "", "/spec/template/spec/containers/1")}}, want, deployment(2, "a", nil))
	if n := len(got.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)); n != 1 {
		t.Errorf("containers after ignoring an element live lacks: %d, want 1", n)
	}
}

func equalObjects(a, b *unstructured.Unstructured) bool {
	return contains(a.Object, b.Object) && contains(b.Object, a.Object)
}
