//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/rudder-operator/rudder/internal/rollout"
	"github.com/rudder-operator/rudder/internal/watches"
)

// rolloutWatches serves WebApp with the chart copied next to it, rolled out
// in the default steps with a short soak, and the step timeout given.
const rolloutWatches = `- group: webapp.my.domain
  version: v1
  kind: WebApp
  chart: webapp
  maxConcurrentReconciles: 8
  rollout:
    steps: [1, "10%%", "50%%", "100%%"]
    soak: 3s
    stepTimeout: %s
    failureBudget: 0
    onFailure: rollback
`

// webAppChart writes the WebApp chart into dir/webapp, its pod template
// annotated with version v; unschedulable adds a nodeSelector no node
// matches, so that its pods never run and no WebApp on it is Ready.
func webAppChart(t *testing.T, dir string, v int, unschedulable bool) string {
	return writeWebAppChart(t, dir, v, unschedulable, false)
}

// writeWebAppChart is webAppChart; unrendered adds a template that does not
// render.
func writeWebAppChart(t *testing.T, dir string, v int, unschedulable, unrendered bool) string {
	t.Helper()
	chart := filepath.Join(dir, "webapp")
	if err := os.RemoveAll(chart); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(chart, os.DirFS(filepath.Join(root, "charts", "webapp"))); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(chart, "templates", "deployment.yaml")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := strings.Replace(string(b), "  template:\n    metadata:\n", fmt.Sprintf("  template:\n    metadata:\n      annotations:\n        rudder.dev/e2e-chart: %q\n", fmt.Sprint(v)), 1)
	if unschedulable {
		tmpl = strings.Replace(tmpl, "    spec:\n      {{- with .Values.podSecurityContext }}", "    spec:\n      nodeSelector:\n        rudder.dev/e2e-no-such-node: \"true\"\n      {{- with .Values.podSecurityContext }}", 1)
	}
	if tmpl == string(b) || unschedulable && !strings.Contains(tmpl, "e2e-no-such-node") {
		t.Fatal("the WebApp chart's deployment.yaml no longer has the lines this test edits")
	}
	if err := os.WriteFile(file, []byte(tmpl), 0o600); err != nil {
		t.Fatal(err)
	}
	if unrendered {
		broken := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-broken\ndata:\n  x: {{ .Values.no.such.value }}\n"
		if err := os.WriteFile(filepath.Join(chart, "templates", "broken.yaml"), []byte(broken), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return chartDigest(t, dir)
}

// chartDigest is the chart digest rudder labels the revisions of the
// WebApp entry of dir/watches.yaml with.
func chartDigest(t *testing.T, dir string) string {
	t.Helper()
	ws, err := watches.Load(os.DirFS(dir), "watches.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ws[0].LoadChart()
	if err != nil {
		t.Fatal(err)
	}
	return ws[0].ChartDigest(c.Digest())
}

// chartRollout reads the ChartRollout of the WebApp chart digest for the operator of namespace ns.
func chartRollout(ns, digest string) (*rollout.ChartRollout, error) {
	gvk := schema.GroupVersionKind{Group: "webapp.my.domain", Version: "v1", Kind: "WebApp"}
	var cr rollout.ChartRollout
	found, err := getJSON(&cr, "chartrollout", rollout.Name(gvk, digest, []string{ns}))
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("no ChartRollout for chart %s", digest)
	}
	return &cr, nil
}

// templates returns the pod template annotation rudder.dev/e2e-chart and the
// generation of every Deployment of ns, by name.
func templates(t *testing.T, ns string) map[string]string {
	t.Helper()
	var deps appsv1.DeploymentList
	if _, err := getJSON(&deps, "deployments", "-n", ns); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range deps.Items {
		out[d.Name] = fmt.Sprintf("chart %s, generation %d, nodeSelector %v", d.Spec.Template.Annotations["rudder.dev/e2e-chart"], d.Generation, d.Spec.Template.Spec.NodeSelector)
	}
	return out
}

// TestRollout_FleetOfWebApps: 100 WebApps and three chart changes, on the
// local cluster.
//   - A good chart reaches them in the steps of watches.yaml, each seen in
//     order in the ChartRollout's status, though the manager is killed
//     (SIGKILL) mid-way; all end on it.
//   - A chart whose pods never run halts at the canary step: the canary is
//     not Ready within stepTimeout, is rolled back (onFailure: rollback), and
//     no other WebApp's Deployment changes. A spec change to one of them
//     during the halt lands with the chart it runs. Undo ends it.
//   - A chart that does not render halts at the first WebApp it is tried on,
//     and no release gets a revision.
func TestRollout_FleetOfWebApps(t *testing.T) {
	t.Parallel() // its own operator over its own namespace
	const ns = "rollout-fleet"
	dir := t.TempDir()
	watchesFile := filepath.Join(dir, "watches.yaml")
	// A step timeout long enough for a killed manager's successor to unlock
	// what it left pending (its Lease expires, storage settles); a short one
	// for the chart whose pods never run.
	stepTimeout := func(d string) {
		if err := os.WriteFile(watchesFile, fmt.Appendf(nil, rolloutWatches, d), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	stepTimeout("3m")
	webAppChart(t, dir, 1, false)
	op := privateOperator(t, ns, "--watches-file="+watchesFile)
	apps := newFleet(t, []string{ns}, 100)
	apps.apply("nginx:1.25")
	eventuallyEvery(t, apps.timeout(), apps.pollEvery(), "100 WebApps Running", func() error { return apps.converged("nginx:1.25") })

	t.Log("a good chart, in steps")
	v2 := webAppChart(t, dir, 2, false)
	op.restart(t, "SIGTERM")
	var seen []int
	started := time.Now()
	step := func(until func(cr *rollout.ChartRollout) error) func() error {
		return func() error {
			cr, err := chartRollout(ns, v2)
			if err != nil {
				return err
			}
			if s := cr.Status.Step; s != 0 && (len(seen) == 0 || seen[len(seen)-1] != s) {
				seen = append(seen, s)
			}
			return until(cr)
		}
	}
	eventuallyEvery(t, apps.timeout(), 200*time.Millisecond, "step 2 of chart 2 under way", step(func(cr *rollout.ChartRollout) error {
		if cr.Status.Step < 2 {
			return fmt.Errorf("step %s", cr.Status.StepText)
		}
		return nil
	}))
	op.kill(t)
	op.startAgain(t)
	eventuallyEvery(t, apps.timeout(), 200*time.Millisecond, "the rollout of chart 2 complete", step(func(cr *rollout.ChartRollout) error {
		if cr.Status.Phase != rollout.PhaseComplete || cr.Status.Updated != 100 {
			return fmt.Errorf("phase %q at step %s, %d of %d updated", cr.Status.Phase, cr.Status.StepText, cr.Status.Updated, cr.Status.Total)
		}
		return nil
	}))
	t.Logf("chart 2 reached 100 WebApps in %s, steps seen %v, the manager killed once step 2 was under way", time.Since(started).Round(time.Second), seen)
	if !slices.Equal(seen, []int{1, 2, 3, 4}) {
		t.Errorf("steps seen %v, want 1, 2, 3, 4", seen)
	}
	if cr, err := chartRollout(ns, v2); err != nil || len(cr.Status.History) != 4 {
		t.Errorf("status.history of chart 2's rollout: want each of 4 steps once, saw %+v (err %v)", cr, err)
	}
	for name, tmpl := range templates(t, ns) {
		if !strings.HasPrefix(tmpl, "chart 2,") {
			t.Errorf("Deployment %s: %s, want chart 2", name, tmpl)
		}
	}

	t.Log("a chart whose pods never run: halted at the canary")
	before := templates(t, ns)
	v3 := webAppChart(t, dir, 3, true)
	stepTimeout("15s")
	op.restart(t, "SIGTERM")
	var halted *rollout.ChartRollout
	eventually(t, "the rollout of chart 3 halted", func() error {
		cr, err := chartRollout(ns, v3)
		if err != nil {
			return err
		}
		if cr.Status.Phase != rollout.PhaseHalted {
			return fmt.Errorf("phase %q at step %s, %d of %d updated, %d failed", cr.Status.Phase, cr.Status.StepText, cr.Status.Updated, cr.Status.Total, cr.Status.Failed)
		}
		halted = cr
		return nil
	})
	if halted.Status.Step != 1 || halted.Status.Failed != 1 || len(halted.Status.FailedResources) != 1 {
		t.Fatalf("halted: %+v", halted.Status)
	}
	canary := halted.Status.FailedResources[0].Name
	eventually(t, "the canary "+canary+" back on chart 2 (onFailure: rollback)", func() error {
		if tmpl := templates(t, ns)[canary]; !strings.HasPrefix(tmpl, "chart 2,") || !strings.HasSuffix(tmpl, "map[]") {
			return fmt.Errorf("Deployment %s: %s", canary, tmpl)
		}
		return nil
	})
	after := templates(t, ns)
	for name, tmpl := range before {
		if name != canary && after[name] != tmpl {
			t.Errorf("Deployment %s, not the canary, changed: %s, then %s", name, tmpl, after[name])
		}
	}

	t.Log("a spec change during the halt lands with chart 2")
	other := apps.names[ns][0]
	if other == canary {
		other = apps.names[ns][1]
	}
	if _, err := run("kubectl", "patch", "webapp", other, "-n", ns, "--type=merge", "-p", `{"spec":{"image":"nginx:1.26"}}`); err != nil {
		t.Fatal(err)
	}
	eventually(t, other+" on nginx:1.26 and chart 2", func() error {
		var d appsv1.Deployment
		if _, err := getJSON(&d, "deployment", other, "-n", ns); err != nil {
			return err
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.26" || d.Spec.Template.Annotations["rudder.dev/e2e-chart"] != "2" {
			return fmt.Errorf("image %s, chart %s", img, d.Spec.Template.Annotations["rudder.dev/e2e-chart"])
		}
		return nil
	})

	t.Log("rudder rollout status and undo")
	out, err := run("rudder", "rollout", "status", "webapp", "--name", halted.Name)
	if err != nil || !strings.Contains(out, "Phase:   Halted") || !strings.Contains(out, ns+"/"+canary+": NotReadyInTime") {
		t.Errorf("rudder rollout status (err %v):\n%s", err, out)
	}
	if out, err := run("rudder", "rollout", "undo", "webapp", "--name", halted.Name); err != nil {
		t.Fatalf("rudder rollout undo: %v\n%s", err, out)
	}
	eventually(t, "the rollout of chart 3 undone", func() error {
		cr, err := chartRollout(ns, v3)
		if err != nil {
			return err
		}
		if cr.Status.Phase != rollout.PhaseUndone {
			return fmt.Errorf("phase %q", cr.Status.Phase)
		}
		return nil
	})

	t.Log("a chart that does not render: halted at the first WebApp")
	before2, err := apps.newest()
	if err != nil {
		t.Fatal(err)
	}
	v4 := writeWebAppChart(t, dir, 4, false, true)
	op.restart(t, "SIGTERM")
	eventually(t, "the rollout of chart 4 halted", func() error {
		cr, err := chartRollout(ns, v4)
		if err != nil {
			return err
		}
		if cr.Status.Phase != rollout.PhaseHalted {
			return fmt.Errorf("phase %q at step %s, %d failed", cr.Status.Phase, cr.Status.StepText, cr.Status.Failed)
		}
		if cr.Status.Failed != 1 || cr.Status.Step != 1 {
			return fmt.Errorf("halted with %d failed at step %s, want 1 at step 1", cr.Status.Failed, cr.Status.StepText)
		}
		return nil
	})
	after2, err := apps.newest()
	if err != nil {
		t.Fatal(err)
	}
	for release, rev := range before2 {
		if strings.HasPrefix(release, ns+"/") && after2[release].version != rev.version {
			t.Errorf("release %s went from revision %d to %d: a chart that does not render stores none", release, rev.version, after2[release].version)
		}
	}
}
