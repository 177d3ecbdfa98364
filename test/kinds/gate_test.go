package kinds_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/values"
	"github.com/rudder-operator/rudder/internal/watches"
	"github.com/rudder-operator/rudder/test/testenv"
)

// TestCharts_QualityGate is the chart gate `make lint` runs (hack/lint.sh):
// every chart of watches.yaml renders with each of its ci/*.yaml values
// files (its defaults when it has none), and every sample of config/samples passes its CRD's
// validation on a real API server and renders with its kind's chart into
// objects the API server accepts.
func TestCharts_QualityGate(t *testing.T) {
	g := gate{t: t, watchesFile: filepath.Join(root, "watches.yaml"), samplesDir: filepath.Join(root, "config", "samples")}
	problems, samples := g.run()
	for _, p := range problems {
		t.Error(p)
	}
	if samples == 0 {
		t.Error("no samples found in config/samples")
	}
	t.Logf("checked %d sample object(s)", samples)
}

// TestCharts_QualityGateRefusesBrokenSamples proves the gate fails, naming the
// sample, the chart and the error, on samples broken in each way it checks.
func TestCharts_QualityGateRefusesBrokenSamples(t *testing.T) {
	dir := filepath.Join("testdata", "gate")
	installCRD(t, filepath.Join(dir, "crd", "gate.rudder.dev_fragiles.yaml"), schema.GroupVersionKind{Group: "gate.rudder.dev", Version: "v1", Kind: "Fragile"})
	g := gate{t: t, watchesFile: filepath.Join(dir, "watches.yaml"), samplesDir: filepath.Join(dir, "samples")}
	problems, _ := g.run()
	for _, p := range problems {
		t.Logf("gate: %s", p)
	}
	want := [][]string{ // each problem: its parts; one problem per broken sample, none for the good one
		{"sample testdata/gate/samples/bad-gateway.yaml (Network bad-gateway)", "chart ../../../../charts/network",
			"the CRD refuses it", "spec.gateway must be an address inside spec.cidr"},
		{"sample testdata/gate/samples/explodes.yaml (Fragile explodes)", "chart charts/fragile",
			"helm template", "this sample asks the chart to fail"},
		{"sample testdata/gate/samples/bad-label.yaml (Fragile bad-label)", "chart charts/fragile",
			"the API server refuses the rendered ConfigMap/fragile-bad-label", "metadata.labels"},
		{"sample testdata/gate/samples/unserved.yaml (Gizmo unserved)", "no entry of", "serves gate.rudder.dev/v1, Kind=Gizmo"},
	}
	for _, parts := range want {
		i := slices.IndexFunc(problems, func(p string) bool {
			for _, part := range parts {
				if !strings.Contains(p, part) {
					return false
				}
			}
			return true
		})
		if i < 0 {
			t.Errorf("no problem holds all of %q", parts)
			continue
		}
		problems = slices.Delete(problems, i, i+1)
	}
	for _, p := range problems {
		t.Errorf("unexpected problem: %s", p)
	}
}

// gate checks the charts of a watches file and the samples of a directory.
type gate struct {
	t           *testing.T
	watchesFile string
	samplesDir  string
}

// run returns every problem found, each naming what it is about, and the
// number of sample objects checked.
func (g gate) run() ([]string, int) {
	ws, err := watches.LoadFile(g.watchesFile)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", g.watchesFile, err)}, 0
	}
	var problems []string
	for _, w := range ws {
		problems = append(problems, g.chartDefaults(w)...)
	}
	files, err := filepath.Glob(filepath.Join(g.samplesDir, "*.yaml"))
	if err != nil {
		return []string{err.Error()}, 0
	}
	ns, samples := namespace(g.t), 0
	for _, file := range files {
		if filepath.Base(file) == "kustomization.yaml" {
			continue
		}
		for _, obj := range readManifests(g.t, file) {
			problems = append(problems, g.sample(ws, file, obj, ns)...)
			samples++
		}
	}
	return problems, samples
}

// chartDefaults renders w's chart with each ci/*.yaml, or with its defaults
// when it has none (the chart-testing convention: a chart whose values.yaml
// leaves a required value to the user gives ci/ values instead).
func (g gate) chartDefaults(w watches.Watch) []string {
	dir := g.chartDir(w)
	valueFiles, _ := filepath.Glob(filepath.Join(dir, "ci", "*.yaml"))
	if len(valueFiles) == 0 {
		valueFiles = []string{""}
	}
	var problems []string
	for _, vf := range valueFiles {
		what := "its defaults"
		if vf != "" {
			what = filepath.Base(vf)
		}
		if _, err := g.template(dir, strings.ToLower(w.GVK.Kind)+"-gate", "default", vf); err != nil {
			problems = append(problems, fmt.Sprintf("chart %s with %s: %v", w.Chart, what, err))
		}
	}
	return problems
}

// sample checks one object of a sample file: the CRD accepts it (server-side
// dry run), its kind's chart renders with its values, and the API server
// accepts every rendered object (dry run).
func (g gate) sample(ws []watches.Watch, file string, obj *unstructured.Unstructured, ns string) []string {
	if rel, err := filepath.Rel(root, file); err == nil && filepath.IsAbs(file) {
		file = rel // config/samples/x.yaml, as the repository names it
	}
	name := fmt.Sprintf("sample %s (%s %s)", file, obj.GetKind(), obj.GetName())
	i := slices.IndexFunc(ws, func(w watches.Watch) bool { return w.GVK == obj.GroupVersionKind() })
	if i < 0 {
		return []string{fmt.Sprintf("%s: no entry of %s serves %s", name, g.watchesFile, obj.GroupVersionKind())}
	}
	w := ws[i]
	name += ", chart " + w.Chart
	obj.SetNamespace(ns)
	var problems []string
	if err := k8s.Create(ctx, obj.DeepCopy(), client.DryRunAll); err != nil {
		problems = append(problems, fmt.Sprintf("%s: the CRD refuses it: %v", name, err))
	}
	vals, err := values.For(obj, w.OverrideValues)
	if err != nil {
		return append(problems, fmt.Sprintf("%s: values: %v", name, err))
	}
	body, err := yaml.Marshal(vals)
	if err != nil {
		return append(problems, fmt.Sprintf("%s: values: %v", name, err))
	}
	vf := filepath.Join(g.t.TempDir(), "values.yaml")
	if err := os.WriteFile(vf, body, 0o600); err != nil {
		return append(problems, err.Error())
	}
	objs, err := g.template(g.chartDir(w), w.ReleaseName(obj.GetName()), ns, vf)
	if err != nil {
		return append(problems, fmt.Sprintf("%s: %v", name, err))
	}
	for _, o := range objs {
		if o.GetNamespace() == "" {
			o.SetNamespace(ns) // as Helm applies it; ignored for a cluster-scoped kind
		}
		if err := k8s.Create(ctx, o, client.DryRunAll); err != nil {
			problems = append(problems, fmt.Sprintf("%s: the API server refuses the rendered %s/%s: %v", name, o.GetKind(), o.GetName(), err))
		}
	}
	return problems
}

// template runs bin/helm template and parses what it renders.
func (g gate) template(chart, release, ns, valuesFile string) ([]*unstructured.Unstructured, error) {
	helmBin := filepath.Join(root, "bin", "helm")
	if _, err := os.Stat(helmBin); err != nil {
		g.t.Fatalf("%s not found: run `make tools` first", helmBin)
	}
	args := []string{"template", release, chart, "--namespace", ns}
	if valuesFile != "" {
		args = append(args, "--values", valuesFile)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, helmBin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("helm template: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	objs, err := helm.ParseManifest(stdout.String())
	if err != nil {
		return nil, fmt.Errorf("helm template: %w", err)
	}
	return objs, nil
}

// chartDir is w's chart directory on disk.
func (g gate) chartDir(w watches.Watch) string {
	if filepath.IsAbs(w.Chart) {
		return w.Chart
	}
	return filepath.Join(filepath.Dir(g.watchesFile), filepath.FromSlash(w.Chart))
}

// installCRD creates the CRD of file and waits until gvk is served.
func installCRD(t *testing.T, file string, gvk schema.GroupVersionKind) {
	t.Helper()
	for _, crd := range readManifests(t, file) {
		if err := k8s.Create(ctx, crd); client.IgnoreAlreadyExists(err) != nil {
			t.Fatalf("creating CRD %s: %v", crd.GetName(), err)
		}
	}
	testenv.Eventually(t, "CRD of "+gvk.Kind+" served", func() error {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		return k8s.List(ctx, list)
	})
}
