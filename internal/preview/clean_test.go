package preview

import (
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func fixture(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		t.Fatal(err)
	}
	return obj
}

func TestKeep_OwnedFields(t *testing.T) {
	live := fixture(t, "live-deployment.yaml")
	fields := ownedFields(live, "rudder")
	if fields == nil {
		t.Fatal("ownedFields found no fields of manager rudder")
	}
	got, err := yaml.Marshal(keep(clean(live), fields))
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    app: shop
  name: shop
  namespace: team-a
spec:
  replicas: 2
  template:
    spec:
      containers:
      - image: nginx:1.25
        name: web
`
	if string(got) != want {
		t.Errorf("keep() =\n%s\nwant (no status, no managed fields or metadata noise, no field another manager owns)\n%s", got, want)
	}
	if ownedFields(live, "kubectl-label") != nil {
		t.Error("ownedFields took an Update entry for an apply's")
	}
}

func TestClean_Noise(t *testing.T) {
	got := clean(fixture(t, "live-deployment.yaml"))
	for _, f := range append([]string{"status"}, noise...) {
		if _, found, _ := unstructured.NestedFieldNoCopy(got, "metadata", f); found {
			t.Errorf("clean() kept metadata.%s", f)
		}
	}
	if _, found := got["status"]; found {
		t.Error("clean() kept status")
	}
	if got["spec"] == nil {
		t.Error("clean() dropped spec")
	}
}

func secret(data map[string]any) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"}, "data": data}
}

func TestMaskSecret(t *testing.T) {
	tests := []struct {
		name                 string
		live, merged         map[string]any
		wantLive, wantMerged map[string]any
	}{
		{
			name:       "unchanged, changed, added and removed keys",
			live:       secret(map[string]any{"same": "c2FtZQ==", "changed": "b2xk", "removed": "Z29uZQ=="}),
			merged:     secret(map[string]any{"same": "c2FtZQ==", "changed": "bmV3", "added": "YWRkZWQ="}),
			wantLive:   secret(map[string]any{"same": mask, "changed": maskBefore, "removed": mask}),
			wantMerged: secret(map[string]any{"same": mask, "changed": maskAfter, "added": mask}),
		},
		{
			name:       "a created Secret",
			merged:     secret(map[string]any{"password": "aHVudGVyMg=="}),
			wantMerged: secret(map[string]any{"password": mask}),
		},
		{
			name:     "a deleted Secret",
			live:     secret(map[string]any{"password": "aHVudGVyMg=="}),
			wantLive: secret(map[string]any{"password": mask}),
		},
		{
			name:       "not a Secret",
			live:       map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "v"}},
			merged:     map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "w"}},
			wantLive:   map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "v"}},
			wantMerged: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "w"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			maskSecret(tt.live, tt.merged)
			if !sameJSON(tt.live, tt.wantLive) || !sameJSON(tt.merged, tt.wantMerged) {
				t.Errorf("maskSecret() = %v, %v; want %v, %v", tt.live, tt.merged, tt.wantLive, tt.wantMerged)
			}
		})
	}
}

func TestMasker_Apply(t *testing.T) {
	m := newMasker([]string{"old-token", "kept-token", "1"}, []string{"new-token", "kept-token", "1"})
	obj := map[string]any{"env": []any{
		map[string]any{"name": "A", "value": "old-token"},
		map[string]any{"name": "B", "value": "new-token"},
		map[string]any{"name": "C", "value": "url://kept-token@host"},
		map[string]any{"name": "D", "value": "1"},
	}}
	got, err := yaml.Marshal(m.apply(obj))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"value: '*** (before)'", "value: '*** (after)'", "value: url://***@host", `value: "1"`} {
		if !strings.Contains(string(got), want) {
			t.Errorf("masked object lacks %q:\n%s", want, got)
		}
	}
	for _, secret := range []string{"old-token", "new-token", "kept-token"} {
		if strings.Contains(string(got), secret) {
			t.Errorf("masked object shows %q:\n%s", secret, got)
		}
	}
	if (*masker)(nil).apply(obj)["env"] == nil {
		t.Error("a nil masker lost the object")
	}
}

func TestPreviousSecrets(t *testing.T) {
	vals := map[string]any{"image": "nginx", "auth": map[string]any{"token": "new-token", "user": "me"}}
	shadow := map[string]any{"image": "nginx", "auth": map[string]any{"token": "Secret/app-auth@42", "user": "me"}}
	old := map[string]any{"image": "nginx:1.24", "auth": map[string]any{"token": "old-token", "user": "me"}}
	got := previousSecrets(vals, shadow, old)
	if len(got) != 1 || got[0] != "old-token" {
		t.Errorf("previousSecrets() = %q, want [old-token]", got)
	}
}
