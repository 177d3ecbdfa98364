package manager_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rudder-operator/rudder/internal/cli"
	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/rollout"
	"github.com/rudder-operator/rudder/internal/shard"
	"github.com/rudder-operator/rudder/internal/stored"
	"github.com/rudder-operator/rudder/test/testenv"
)

// rolloutWatches serves the Network kind with the chart in the directory
// next to it, rolled out in three steps with no soak.
const rolloutWatches = `- group: samplecrd.k8s.io
  version: v1
  kind: Network
  chart: chart
  rollout:
    steps: [1, "50%%", "100%%"]
    soak: %q
    stepTimeout: 15s
    failureBudget: %d
    onFailure: keep
`

// writeWatches writes dir/watches.yaml with rolloutWatches' soak and
// budget, and the entry's fields more.
func writeWatches(t *testing.T, dir, soak string, budget int, more ...string) string {
	t.Helper()
	file := filepath.Join(dir, "watches.yaml")
	entry := fmt.Sprintf(rolloutWatches, soak, budget) + strings.Join(more, "")
	if err := os.WriteFile(file, []byte(entry), 0o600); err != nil {
		t.Fatal(err)
	}
	return "--watches-file=" + file
}

// networkChart writes the chart of version v into dir/chart: a ConfigMap
// that says v, and when broken a Deployment too, which never becomes Ready
// on an API server without controllers.
func networkChart(t *testing.T, dir string, v int, broken bool) string {
	return writeNetworkChart(t, dir, v, broken, false)
}

// writeNetworkChart is networkChart, whose ConfigMap does not render when
// unrendered.
func writeNetworkChart(t *testing.T, dir string, v int, broken, unrendered bool) string {
	t.Helper()
	chart := filepath.Join(dir, "chart")
	if err := os.RemoveAll(chart); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"Chart.yaml": fmt.Sprintf("apiVersion: v2\nname: net\nversion: 0.%d.0\n", v),
		"templates/configmap.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n"+
			"data:\n  chart: %q\n  cidr: {{ .Values.cidr | quote }}\n  label: {{ .Values.label | default \"none\" | quote }}\n", strconv.Itoa(v)),
	}
	if unrendered {
		files["templates/configmap.yaml"] += "  broken: {{ .Values.nothing.here }}\n"
	}
	if broken {
		files["templates/deployment.yaml"] = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n" +
			"spec:\n  selector: {matchLabels: {app: x}}\n  template:\n    metadata: {labels: {app: x}}\n" +
			"    spec: {containers: [{name: x, image: registry.invalid/x}]}\n"
	}
	for name, data := range files {
		p := filepath.Join(chart, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c, err := helm.LoadChart(os.DirFS(dir), "chart")
	if err != nil {
		t.Fatal(err)
	}
	return c.Digest()
}

// TestRollout_StepsHaltAndUndo runs the manager binary over six Networks
// while their chart changes twice:
//   - a good change reaches them in the steps of watches.yaml, seen in
//     order in the ChartRollout's status, and all end on it;
//   - a bad change (a Deployment that is never Ready) halts once the canary
//     is not Ready within stepTimeout: no other Network gets a revision,
//     and a spec change to one of them lands with the chart it runs;
//   - undo takes the canary back to the chart it had.
func TestRollout_StepsHaltAndUndo(t *testing.T) {
	t.Parallel() // an API server of its own
	ctrllog.SetLogger(logr.Discard())
	bin := buildManager(t)
	env, k8s := startAPIServer(t, "")
	ctx := context.Background()
	dir := t.TempDir()
	watchesFlag := writeWatches(t, dir, "0", 0)
	const ns = "fleet"
	v1 := networkChart(t, dir, 1, false)
	m := startManager(t, bin, env, watchesFlag)
	names := createNetworks(t, k8s, ns, 6)
	allOn := func(digest string) func() error { return allOnChart(t, k8s, ns, names, digest) }
	testenv.Eventually(t, "every Network installed with chart 1", allOn(v1))
	testenv.Eventually(t, "the rollout of chart 1 complete", phaseIs(k8s, v1, rollout.PhaseComplete))

	// A good change, in steps.
	m.stop()
	v2 := networkChart(t, dir, 2, false)
	m = startManager(t, bin, env, watchesFlag)
	var seen []int
	testenv.Eventually(t, "the rollout of chart 2 complete", func() error {
		cr, err := readRollout(k8s, v2)
		if err != nil {
			return err
		}
		if s := cr.Status.Step; s != 0 && (len(seen) == 0 || seen[len(seen)-1] != s) {
			seen = append(seen, s)
		}
		if cr.Status.Phase != rollout.PhaseComplete {
			return fmt.Errorf("phase %q at step %s", cr.Status.Phase, cr.Status.StepText)
		}
		if len(cr.Status.History) != 3 || cr.Status.Updated != 6 || cr.Status.Total != 6 {
			return fmt.Errorf("status %+v", cr.Status)
		}
		return nil
	})
	if !slices.IsSorted(seen) || seen[0] != 1 || seen[len(seen)-1] != 3 {
		t.Errorf("steps seen %v, want 1, 2, 3 in order", seen)
	}
	if err := allOn(v2)(); err != nil {
		t.Error(err)
	}
	if cr, err := readRollout(k8s, v1); err != nil || cr.Status.Phase != rollout.PhaseSuperseded {
		t.Errorf("the rollout of chart 1 is not superseded: %v %v", cr, err)
	}

	// A bad change halts at the canary.
	m.stop()
	before := revisionCounts(t, k8s, ns, names)
	v3 := networkChart(t, dir, 3, true)
	m = startManager(t, bin, env, watchesFlag)
	testenv.Eventually(t, "the rollout of chart 3 halted", phaseIs(k8s, v3, rollout.PhaseHalted))
	cr, err := readRollout(k8s, v3)
	if err != nil {
		t.Fatal(err)
	}
	if cr.Status.Failed != 1 || len(cr.Status.FailedResources) != 1 || cr.Status.Step != 1 {
		t.Fatalf("halted rollout: %+v", cr.Status)
	}
	canary := cr.Status.FailedResources[0].Name
	after := revisionCounts(t, k8s, ns, names)
	for _, name := range names {
		if name != canary && after[name] != before[name] {
			t.Errorf("Network %s, not the canary, went from %d to %d revisions", name, before[name], after[name])
		}
	}
	if got := deployedChart(t, k8s, ns, "network-"+canary); got != v3 {
		t.Errorf("the canary %s runs %q, want chart 3 kept for inspection (onFailure: keep)", canary, got)
	}

	// A spec change during the halt lands with the chart the Network runs.
	other := changeAnother(t, k8s, ns, names, canary, "10.99", "chart", "2")
	testenv.Eventually(t, other+" deployed on chart 2", func() error {
		if got := deployedChart(t, k8s, ns, "network-"+other); got != v2 {
			return fmt.Errorf("Network %s runs %q after its spec change, want chart 2", other, got)
		}
		return nil
	})

	// rudder rollout status shows the halt and the canary; undo takes it back.
	kubeconfig := adminKubeconfig(t, env)
	rudder := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		err := cli.Run(ctx, append(args, "--kubeconfig", kubeconfig), cli.Options{Name: "rudder",
			IO: genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}})
		if err != nil {
			t.Fatalf("rudder %v: %v\n%s", args, err, errOut.String())
		}
		return out.String()
	}
	status := rudder("rollout", "status", "network")
	for _, want := range []string{"Phase:   Halted", "Step:    1/3 (1)", "fleet/" + canary + ": NotReadyInTime", "FailureBudgetExceeded"} {
		if !strings.Contains(status, want) {
			t.Errorf("rudder rollout status does not say %q:\n%s", want, status)
		}
	}
	rudder("rollout", "undo", "network")
	testenv.Eventually(t, "the rollout of chart 3 undone", phaseIs(k8s, v3, rollout.PhaseUndone))
	if err := allOn(v2)(); err != nil {
		t.Error(err)
	}

	// Chart 1 again (a revert): its superseded rollout starts over.
	m.stop()
	if networkChart(t, dir, 1, false) != v1 {
		t.Fatal("chart 1 written again has another digest")
	}
	startManager(t, bin, env, watchesFlag)
	testenv.Eventually(t, "the rollout of chart 1 complete again", phaseIs(k8s, v1, rollout.PhaseComplete))
	testenv.Eventually(t, "every Network back on chart 1", allOn(v1))
	if cr, err := readRollout(k8s, v1); err != nil || len(cr.Status.History) != 3 || cr.Spec.StartedAt == nil {
		t.Errorf("the rollout of chart 1, started again: %+v (err %v)", cr, err)
	}
}

// createNetworks creates namespace ns and n Networks in it, and returns their names.
func createNetworks(t *testing.T, k8s client.Client, ns string, n int) []string {
	t.Helper()
	ctx := context.Background()
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range n {
		name := fmt.Sprintf("net-%d", i)
		names = append(names, name)
		if err := k8s.Create(ctx, fleetNetwork(ns, name, fmt.Sprintf("10.%d.0.0/16", i))); err != nil {
			t.Fatal(err)
		}
	}
	return names
}

// allOnChart checks that every Network of names has its deployed revision on chart digest.
func allOnChart(t *testing.T, k8s client.Client, ns string, names []string, digest string) func() error {
	return func() error {
		for _, name := range names {
			if d := deployedChart(t, k8s, ns, "network-"+name); d != digest {
				return fmt.Errorf("Network %s runs chart %q, want %q", name, d, digest)
			}
		}
		return nil
	}
}

var networkGVK = schema.GroupVersionKind{Group: "samplecrd.k8s.io", Version: "v1", Kind: "Network"}

// process is a manager binary running until stop, or the test's end.
type process struct {
	cmd *exec.Cmd
	out *lines
}

// startManager runs the manager binary bin against env with args.
func startManager(t *testing.T, bin string, env *envtest.Environment, args ...string) *process {
	t.Helper()
	return startManagerWith(t, bin, env, nil, args...)
}

// startManagerWith is startManager with the environment's variables vars.
func startManagerWith(t *testing.T, bin string, env *envtest.Environment, vars []string, args ...string) *process {
	t.Helper()
	p := &process{out: &lines{}}
	p.cmd = exec.Command(bin, append([]string{"--metrics-bind-address=0", "--health-probe-bind-address=0", "--log-level=debug"}, args...)...)
	p.cmd.Env = append(append(os.Environ(), "KUBECONFIG="+adminKubeconfig(t, env)), vars...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("manager %v:\n%s", args, p.out)
		}
	})
	return p
}

// kill kills the manager with SIGKILL, as a node's failure would, and waits for it.
func (p *process) kill() {
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
}

// stop stops the manager as Kubernetes does, with SIGTERM, and waits for it.
func (p *process) stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Wait()
}

// TestRollout_UnrenderedChartAndKill: a chart that does not render for the
// values its predecessor rendered halts the rollout at the first resource
// it is tried on, whatever the failure budget; a rollout whose manager is
// killed mid-step continues where it was, each step once.
func TestRollout_UnrenderedChartAndKill(t *testing.T) {
	t.Parallel() // an API server of its own
	ctrllog.SetLogger(logr.Discard())
	bin := buildManager(t)
	env, k8s := startAPIServer(t, "")
	dir := t.TempDir()
	const ns = "fleet"
	v1 := networkChart(t, dir, 1, false)
	m := startManager(t, bin, env, writeWatches(t, dir, "0", 5))
	names := createNetworks(t, k8s, ns, 4)
	testenv.Eventually(t, "every Network installed with chart 1", allOnChart(t, k8s, ns, names, v1))
	m.stop()

	before := revisionCounts(t, k8s, ns, names)
	v2 := writeNetworkChart(t, dir, 2, false, true)
	m = startManager(t, bin, env, writeWatches(t, dir, "0", 5))
	testenv.Eventually(t, "the rollout of the chart that does not render halted", phaseIs(k8s, v2, rollout.PhaseHalted))
	cr, err := readRollout(k8s, v2)
	if err != nil {
		t.Fatal(err)
	}
	halted := meta.FindStatusCondition(cr.Status.Conditions, rollout.ConditionHalted)
	if cr.Status.Failed != 1 || cr.Status.Step != 1 || halted == nil || halted.Reason != "ChartBroken" {
		t.Errorf("halted rollout: %+v", cr.Status)
	}
	if after := revisionCounts(t, k8s, ns, names); !maps.Equal(before, after) {
		t.Errorf("revisions went from %v to %v: a chart that does not render stores none", before, after)
	}
	m.stop()

	// A good chart with a soak; the manager is killed once step 2 began.
	v3 := networkChart(t, dir, 3, false)
	watchesFlag := writeWatches(t, dir, "3s", 0)
	m = startManager(t, bin, env, watchesFlag)
	testenv.Eventually(t, "step 2 of chart 3 began", func() error {
		cr, err := readRollout(k8s, v3)
		if err != nil {
			return err
		}
		if cr.Status.Step != 2 {
			return fmt.Errorf("step %s", cr.Status.StepText)
		}
		return nil
	})
	m.kill()
	startManager(t, bin, env, watchesFlag)
	testenv.Eventually(t, "the rollout of chart 3 complete", phaseIs(k8s, v3, rollout.PhaseComplete))
	if cr, err = readRollout(k8s, v3); err != nil {
		t.Fatal(err)
	}
	var steps []int
	for _, h := range cr.Status.History {
		steps = append(steps, h.Step)
	}
	if !slices.Equal(steps, []int{1, 2, 3}) {
		t.Errorf("steps in status.history %v, want 1, 2, 3 once each", steps)
	}
	if err := allOnChart(t, k8s, ns, names, v3)(); err != nil {
		t.Error(err)
	}
}

// TestRollout_TwoShards: two managers, shard 0 and 1 of 2, split one
// rollout: each counts and promotes its own Networks and writes its row of
// status.shards, and the steps move once both rows are done.
func TestRollout_TwoShards(t *testing.T) {
	t.Parallel() // an API server of its own
	ctrllog.SetLogger(logr.Discard())
	bin := buildManager(t)
	env, k8s := startAPIServer(t, "")
	dir := t.TempDir()
	// Two namespaces of each shard, two Networks in each.
	var namespaces []string
	owned := map[int]int{}
	for n := 0; len(namespaces) < 4; n++ {
		ns := fmt.Sprintf("fleet-%d", n)
		if i := shard.Of(ns, 2).Index; owned[i] < 2 {
			owned[i]++
			namespaces = append(namespaces, ns)
		}
	}
	names := map[string][]string{}
	for _, ns := range namespaces {
		names[ns] = createNetworks(t, k8s, ns, 2)
	}
	start := func(watchesFlag string) []*process {
		var ps []*process
		for i := range 2 {
			ps = append(ps, startManagerWith(t, bin, env, []string{"RUDDER_SHARDS=2"}, watchesFlag,
				"--leader-election-namespace=default", fmt.Sprintf("--shard=%d", i)))
		}
		return ps
	}
	allOn := func(digest string) func() error {
		return func() error {
			for _, ns := range namespaces {
				if err := allOnChart(t, k8s, ns, names[ns], digest)(); err != nil {
					return err
				}
			}
			return nil
		}
	}
	v1 := networkChart(t, dir, 1, false)
	ps := start(writeWatches(t, dir, "0", 0))
	testenv.Eventually(t, "every Network installed with chart 1", allOn(v1))
	for _, p := range ps {
		p.stop()
	}

	v2 := networkChart(t, dir, 2, false)
	start(writeWatches(t, dir, "0", 0))
	testenv.Eventually(t, "the rollout of chart 2 complete", phaseIs(k8s, v2, rollout.PhaseComplete))
	cr, err := readRollout(k8s, v2)
	if err != nil {
		t.Fatal(err)
	}
	if len(cr.Status.History) != 3 || cr.Status.Total != 8 || cr.Status.Updated != 8 || len(cr.Status.Shards) != 2 {
		t.Fatalf("status %+v", cr.Status)
	}
	for _, row := range cr.Status.Shards {
		if row.Total != 4 || row.Updated != 4 || row.Step != 3 || !row.Done {
			t.Errorf("shard %s's row %+v, want its 4 Networks updated at step 3", row.Shard, row)
		}
	}
	if err := allOn(v2)(); err != nil {
		t.Error(err)
	}
}

// TestRollout_OverrideValues: a change of the kind's overrideValues is a
// change of its chart. It rolls out in steps, and a Network not promoted
// yet keeps the overrideValues its revision ran with when its spec changes.
func TestRollout_OverrideValues(t *testing.T) {
	t.Parallel() // an API server of its own
	ctrllog.SetLogger(logr.Discard())
	bin := buildManager(t)
	env, k8s := startAPIServer(t, "")
	ctx := context.Background()
	dir := t.TempDir()
	const ns = "fleet"
	networkChart(t, dir, 1, false)
	m := startManager(t, bin, env, writeWatches(t, dir, "0", 0, "  overrideValues: {label: a}\n"))
	names := createNetworks(t, k8s, ns, 4)
	labelsAre := func(want map[string]string) func() error {
		return func() error {
			for _, name := range names {
				var cm corev1.ConfigMap
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "network-" + name}, &cm); err != nil {
					return err
				}
				if w, ok := want[name]; ok && cm.Data["label"] != w {
					return fmt.Errorf("Network %s has label %q, want %q", name, cm.Data["label"], w)
				}
			}
			return nil
		}
	}
	testenv.Eventually(t, "every Network installed with label a", labelsAre(map[string]string{"net-0": "a", "net-1": "a", "net-2": "a", "net-3": "a"}))
	withLabel := func(label string) (*rollout.ChartRollout, error) {
		list := rollout.NewList()
		if err := k8s.List(ctx, list); err != nil {
			return nil, err
		}
		for i := range list.Items {
			cr, err := rollout.FromUnstructured(&list.Items[i])
			if err != nil {
				return nil, err
			}
			if cr.Spec.OverrideValues["label"] == label {
				return cr, nil
			}
		}
		return nil, nil
	}
	// The rollout of label a records it: what a Network not promoted past it keeps.
	testenv.Eventually(t, "the rollout of label a complete", func() error {
		if cr, err := withLabel("a"); err != nil || cr == nil || cr.Status.Phase != rollout.PhaseComplete {
			return fmt.Errorf("rollout of label a: %+v (err %w)", cr, err)
		}
		return nil
	})
	m.stop()

	// Label b, and a soak that holds the rollout at its first step.
	startManager(t, bin, env, writeWatches(t, dir, "1h", 0, "  overrideValues: {label: b}\n"))
	var canary string
	testenv.Eventually(t, "the canary on label b, the others held", func() error {
		current, err := withLabel("b")
		if err != nil {
			return err
		}
		if current == nil || current.Status.Updated != 1 || current.Status.Step != 1 {
			return fmt.Errorf("rollout of label b: %+v", current)
		}
		for _, name := range names {
			var cm corev1.ConfigMap
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "network-" + name}, &cm); err != nil {
				return err
			}
			if cm.Data["label"] == "b" {
				canary = name
			}
		}
		return nil
	})
	if canary == "" {
		t.Fatal("no Network has label b")
	}
	changeAnother(t, k8s, ns, names, canary, "10.77", "label", "a")
}

// changeAnother changes the cidr of a Network of names other than canary to
// prefix.0.0/16 and waits until its ConfigMap has it, with key at want: what
// the chart it runs renders. It returns the Network's name.
func changeAnother(t *testing.T, k8s client.Client, ns string, names []string, canary, prefix, key, want string) string {
	t.Helper()
	ctx := context.Background()
	other := names[0]
	if other == canary {
		other = names[1]
	}
	patch := fmt.Appendf(nil, `{"spec":{"cidr":"%[1]s.0.0/16","gateway":"%[1]s.0.1"}}`, prefix)
	if err := k8s.Patch(ctx, fleetNetwork(ns, other, ""), client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the spec change of "+other+" upgraded with "+key+" "+want, func() error {
		var cm corev1.ConfigMap
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "network-" + other}, &cm); err != nil {
			return err
		}
		if cm.Data["cidr"] != prefix+".0.0/16" || cm.Data[key] != want {
			return fmt.Errorf("ConfigMap data %v", cm.Data)
		}
		return nil
	})
	return other
}

func fleetNetwork(ns, name, cidr string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "samplecrd.k8s.io/v1", "kind": "Network",
		"metadata": map[string]any{"name": name, "namespace": ns},
	}}
	if cidr != "" {
		u.Object["spec"] = map[string]any{"cidr": cidr, "gateway": strings.TrimSuffix(cidr, "0/16") + "1"}
	}
	return u
}

func rolloutObject(digest string) *unstructured.Unstructured {
	u := rollout.New()
	u.SetName(rollout.Name(networkGVK, digest, nil))
	return u
}

func readRollout(k8s client.Client, digest string) (*rollout.ChartRollout, error) {
	u := rolloutObject(digest)
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(u), u); err != nil {
		return nil, err
	}
	return rollout.FromUnstructured(u)
}

func phaseIs(k8s client.Client, digest, phase string) func() error {
	return func() error {
		cr, err := readRollout(k8s, digest)
		if err != nil {
			return err
		}
		if cr.Status.Phase != phase {
			return fmt.Errorf("phase %q at step %s, %d of %d updated, %d failed", cr.Status.Phase, cr.Status.StepText,
				cr.Status.Updated, cr.Status.Total, cr.Status.Failed)
		}
		return nil
	}
}

// deployedChart returns the chart digest label of release's deployed revision; "" when none is deployed.
func deployedChart(t *testing.T, k8s client.Client, ns, release string) string {
	t.Helper()
	var list corev1.SecretList
	if err := k8s.List(context.Background(), &list, client.InNamespace(ns), client.MatchingLabels{"owner": "helm", "name": release, "status": "deployed"}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		return ""
	}
	return list.Items[0].Labels[stored.LabelChartDigest]
}

func revisionCounts(t *testing.T, k8s client.Client, ns string, names []string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, name := range names {
		revs, err := testenv.Revisions(context.Background(), k8s, ns, "network-"+name)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = len(revs)
	}
	return out
}
