package helm

import (
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	release "helm.sh/helm/v4/pkg/release/v1"
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

// A hook digests as Helm 3 encoded it, whatever its last run: the
// signatures of the revisions rudder wrote on Helm 3 (test hooks in the
// WebApp chart) verify on Helm 4, which encodes an empty run otherwise.
func TestHookContent_AsHelm3EncodedIt(t *testing.T) {
	h := &release.Hook{Name: "t", Kind: "Pod", Path: "p", Manifest: "hm", Weight: 5,
		Events: []release.HookEvent{release.HookTest}, DeletePolicies: []release.HookDeletePolicy{"hook-succeeded"},
		OutputLogPolicies: []release.HookOutputLogPolicy{"hook-failed"},
		LastRun:           release.HookExecution{StartedAt: time.Now(), CompletedAt: time.Now(), Phase: release.HookPhaseSucceeded}}
	// canonical() of Helm 3's Hook with LastRun zeroed, as rudder on Helm 3 signed it.
	const helm3 = `{"delete_policies":["hook-succeeded"],"events":["test"],"kind":"Pod","last_run":{"completed_at":"","phase":"","started_at":""},"manifest":"hm","name":"t","output_log_policies":["hook-failed"],"path":"p","weight":5}`
	if got := string(hookContent(h)); got != helm3 {
		t.Errorf("hook content\n got %s\nwant %s", got, helm3)
	}
}
