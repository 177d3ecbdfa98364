package helm

import (
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
)

func TestParseManifest(t *testing.T) {
	manifest := `---
# Source: webapp/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: a
spec:
  ports:
  - port: 80
---
---
# Source: an empty template
`
	objs, err := ParseManifest(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].GetKind() != "Service" {
		t.Fatalf("objects = %v, want one Service", objs)
	}
	port := objs[0].Object["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["port"]
	if _, ok := port.(int64); !ok {
		t.Errorf("port decoded as %T, want int64 like the API server's objects", port)
	}
	if _, err := ParseManifest("kind: [unclosed"); err == nil {
		t.Error("malformed manifest parsed without error")
	}
}

func TestChartDigest(t *testing.T) {
	mk := func(tpl string, dep *chart.Chart) *chart.Chart {
		c := &chart.Chart{Metadata: &chart.Metadata{Name: "c", Version: "1.0.0"},
			Raw: []*common.File{{Name: "Chart.yaml", Data: []byte("name: c")}, {Name: "templates/a.yaml", Data: []byte(tpl)}}}
		if dep != nil {
			c.AddDependency(dep)
		}
		return c
	}
	dep := func(v string) *chart.Chart {
		return &chart.Chart{Metadata: &chart.Metadata{Name: "d"}, Raw: []*common.File{{Name: "values.yaml", Data: []byte(v)}}}
	}
	base := (&Chart{chart: mk("x", dep("1"))}).Digest()
	tests := []struct {
		name  string
		c     *chart.Chart
		equal bool
	}{
		{name: "same chart", c: mk("x", dep("1")), equal: true},
		{name: "template edited", c: mk("y", dep("1"))},
		{name: "dependency edited", c: mk("x", dep("2"))},
		{name: "dependency removed", c: mk("x", nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (&Chart{chart: tt.c}).Digest(); (got == base) != tt.equal {
				t.Errorf("digest equal = %v, want %v", got == base, tt.equal)
			}
		})
	}
}
