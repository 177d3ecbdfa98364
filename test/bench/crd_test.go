package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestBaselineCRD(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", rudderCRDFile))
	if err != nil {
		t.Fatal(err)
	}
	crd, err := baselineCRD(data, baselineWebApp.Group)
	if err != nil {
		t.Fatal(err)
	}
	rudderCRD := &unstructured.Unstructured{}
	if err := yamlUnmarshal(firstDocument(data), rudderCRD); err != nil {
		t.Fatal(err)
	}
	v0 := func(u *unstructured.Unstructured) map[string]any {
		vs, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
		return vs[0].(map[string]any)
	}
	str := func(u *unstructured.Unstructured, path ...string) string {
		s, _, _ := unstructured.NestedString(u.Object, path...)
		return s
	}
	specOf := func(v map[string]any) any {
		s, _, _ := unstructured.NestedFieldNoCopy(v, "schema", "openAPIV3Schema", "properties", "spec")
		return s
	}
	statusOf := func(v map[string]any) map[string]any {
		s, _, _ := unstructured.NestedMap(v, "schema", "openAPIV3Schema", "properties", "status")
		return s
	}
	_, hasShortNames, _ := unstructured.NestedSlice(crd.Object, "spec", "names", "shortNames")
	_, hasSubresource, _ := unstructured.NestedMap(v0(crd), "subresources", "status")
	tests := []struct {
		name string
		ok   bool
	}{
		{"named after the new group", crd.GetName() == "baselinewebapps.baseline.bench.rudder.dev"},
		{"resource names kubectl cannot take for rudder's", str(crd, "spec", "names", "plural") == "baselinewebapps" &&
			str(crd, "spec", "names", "singular") == "baselinewebapp"},
		{"in the new group", str(crd, "spec", "group") == "baseline.bench.rudder.dev"},
		{"same kind", str(crd, "spec", "names", "kind") == "WebApp"},
		{"no short names to clash with rudder's", !hasShortNames},
		{"same spec schema", equalJSON(t, specOf(v0(crd)), specOf(v0(rudderCRD)))},
		{"open status", statusOf(v0(crd))["x-kubernetes-preserve-unknown-fields"] == true && len(statusOf(v0(crd))) == 2},
		{"status subresource on", hasSubresource},
		{"rudder's CRD unchanged in group", str(rudderCRD, "spec", "group") == "webapp.my.domain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.ok {
				t.Error("not so")
			}
		})
	}
}

func TestBaselineCRD_RejectsOtherKinds(t *testing.T) {
	if _, err := baselineCRD([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"), "g.example"); err == nil {
		t.Error("baselineCRD accepted a ConfigMap")
	}
}

func TestFirstDocument(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"comments and a separator first", "# generated\n# do not edit\n---\nkind: A\n", "kind: A"},
		{"no separator", "kind: A\n", "kind: A"},
		{"two documents", "---\nkind: A\n---\nkind: B\n", "kind: A"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(stripComments(firstDocument([]byte(tt.in)))); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func yamlUnmarshal(data []byte, u *unstructured.Unstructured) error {
	return yaml.Unmarshal(data, &u.Object)
}

// equalJSON says whether a and b, both non-empty, marshal to the same JSON.
func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	return len(ja) > len("null") && bytes.Equal(ja, jb)
}
