//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podChaos is the part of a PodChaos the tests read.
type podChaos struct {
	Status struct {
		Chaos struct {
			Phase        string `json:"phase"`
			Message      string `json:"message"`
			Rounds       int    `json:"rounds"`
			LastRecovery string `json:"lastRecovery"`
			History      []struct {
				Round    int      `json:"round"`
				Pods     []string `json:"pods"`
				Refused  []string `json:"refused"`
				Skipped  string   `json:"skipped"`
				Recovery string   `json:"recovery"`
			} `json:"history"`
		} `json:"chaos"`
		Conditions []metav1.Condition `json:"conditions"`
	} `json:"status"`
}

// createPodChaos applies a PodChaos named name in ns with spec.
func createPodChaos(t *testing.T, ns, name string, spec map[string]any) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"apiVersion": "chaos.my.domain/v1", "kind": "PodChaos",
		"metadata": map[string]any{"name": name, "namespace": ns}, "spec": spec})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, string(b))
}

// podSampler watches the pods labeled app=<app> of a namespace (kubectl get
// --watch) and, at every change it sees, counts those not Ready against the
// desired replicas: a pod deleted and not replaced yet counts as not Ready.
type podSampler struct {
	mu          sync.Mutex
	pods        map[string]corev1.Pod
	desired     int
	samples     int
	worst       int
	worstAt     string
	deleted     map[string]bool // pods seen being deleted
	initialized chan struct{}
	watch       *podWatch
}

func samplePods(t *testing.T, ns, app string, desired int) *podSampler {
	t.Helper()
	s := &podSampler{pods: map[string]corev1.Pod{}, desired: desired, deleted: map[string]bool{}, initialized: make(chan struct{})}
	s.watch = watchPods(t, ns, "app="+app, s.see)
	select {
	case <-s.initialized:
	case <-time.After(time.Minute):
		t.Fatalf("the watch of pods app=%s in %s saw fewer than %d Ready pods in a minute", app, ns, desired)
	}
	return s
}

func (s *podSampler) see(typ string, p corev1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if typ == "DELETED" {
		delete(s.pods, p.Name)
	} else {
		s.pods[p.Name] = p
	}
	if p.DeletionTimestamp != nil || typ == "DELETED" {
		s.deleted[p.Name] = true
	}
	ready := 0
	for _, q := range s.pods {
		if q.DeletionTimestamp != nil {
			continue
		}
		for _, c := range q.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	select {
	case <-s.initialized:
	default:
		if ready >= s.desired {
			close(s.initialized)
		}
		return // the first list, pod by pod
	}
	s.samples++
	if notReady := s.desired - ready; notReady > s.worst {
		s.worst, s.worstAt = notReady, fmt.Sprintf("%s %s", typ, p.Name)
	}
}

// stop ends the watch and waits for kubectl to exit; it may be called again.
func (s *podSampler) stop() { s.watch.stop() }

// result returns the samples taken, the most pods not Ready at one, when, and the pods seen deleted.
func (s *podSampler) result() (samples, worst int, worstAt string, deleted []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range s.deleted {
		deleted = append(deleted, name)
	}
	sort.Strings(deleted)
	return s.samples, s.worst, s.worstAt, deleted
}

// Issue 35: a 4-replica WebApp under a PodChaos of one pod every 10s for 40s
// never has more than one pod not Ready, at any change the watch of its pods
// sees, and the PodChaos completes with 4 rounds, each with a recovery time.
func TestPodChaos_KillsWithinTheBudget(t *testing.T) {
	t.Parallel() // its own operator over its own namespace
	const ns = "chaos-kill"
	privateOperator(t, ns)
	app := newApp(t, ns, "web")
	app.create(map[string]any{"image": "nginx:1.25", "replicas": 4, "port": 80})
	app.waitServing(1, "nginx:1.25", 4)
	sampler := samplePods(t, ns, "web", 4)

	start := time.Now()
	createPodChaos(t, ns, "kill-one", map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
		"action": "kill", "count": 1, "interval": "10s", "duration": "40s", "maxUnavailable": 1})
	var pc podChaos
	eventuallyEvery(t, 2*time.Minute, 500*time.Millisecond, "PodChaos kill-one Completed", func() error {
		if _, err := getJSON(&pc, "podchaos", "kill-one", "-n", ns); err != nil {
			return err
		}
		if c := pc.Status.Chaos; c.Phase != "Completed" {
			return fmt.Errorf("phase %q (%s), %d rounds", c.Phase, c.Message, c.Rounds)
		}
		return nil
	})
	took := time.Since(start)
	sampler.stop()
	samples, worst, worstAt, deleted := sampler.result()
	t.Logf("completed in %s; %d samples of the pods, at most %d not Ready (at %s); pods deleted: %v",
		took.Round(100*time.Millisecond), samples, worst, worstAt, deleted)
	if worst > 1 {
		t.Errorf("%d pods were not Ready at once (at %s), want at most 1 (maxUnavailable)", worst, worstAt)
	}
	c := pc.Status.Chaos
	if c.Rounds != 4 || len(c.History) != 4 {
		t.Fatalf("%d rounds, history %+v; want 4", c.Rounds, c.History)
	}
	var killed []string
	for _, r := range c.History {
		t.Logf("round %d: killed %v, recovered in %s", r.Round, r.Pods, r.Recovery)
		if len(r.Pods) != 1 || r.Recovery == "" {
			t.Errorf("round %d: pods %v, recovery %q; want one pod and a recovery time", r.Round, r.Pods, r.Recovery)
		}
		killed = append(killed, r.Pods...)
	}
	sort.Strings(killed)
	if strings.Join(killed, ",") != strings.Join(deleted, ",") {
		t.Errorf("the rounds killed %v, the watch saw %v deleted", killed, deleted)
	}
	if cond := condition(pc.Status.Conditions, "Recovered"); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("condition Recovered %+v, want True", cond)
	}
	if took < 30*time.Second {
		t.Errorf("the 4 rounds took %s, want at least 30s (every 10s)", took)
	}
	app.waitServing(1, "nginx:1.25", 4)
}

// Issue 35: with action evict and a PodDisruptionBudget that allows none,
// the PodChaos reports Blocked and no pod is deleted.
func TestPodChaos_EvictionBlockedByABudget(t *testing.T) {
	t.Parallel() // its own operator over its own namespace
	const ns = "chaos-evict"
	privateOperator(t, ns)
	app := newApp(t, ns, "web")
	app.create(map[string]any{"image": "nginx:1.25", "replicas": 2, "port": 80})
	app.waitServing(1, "nginx:1.25", 2)
	apply(t, `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: `+ns+`}
spec:
  maxUnavailable: 0
  selector: {matchLabels: {app: web}}
`)
	eventually(t, "the disruption controller's status of PodDisruptionBudget web", func() error {
		out, err := run("kubectl", "get", "pdb", "web", "-n", ns, "-o", "jsonpath={.status.expectedPods}/{.status.disruptionsAllowed}")
		if err != nil {
			return err
		}
		if out != "2/0" {
			return fmt.Errorf("expectedPods/disruptionsAllowed %q, want 2/0", out)
		}
		return nil
	})
	before := kubectl(t, "get", "pods", "-n", ns, "-l", "app=web", "-o", "jsonpath={.items[*].metadata.uid}")

	createPodChaos(t, ns, "evict-one", map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
		"action": "evict", "interval": "10s", "duration": "30s"})
	var pc podChaos
	eventually(t, "PodChaos evict-one Blocked", func() error {
		if _, err := getJSON(&pc, "podchaos", "evict-one", "-n", ns); err != nil {
			return err
		}
		if c := pc.Status.Chaos; c.Phase != "Blocked" {
			return fmt.Errorf("phase %q (%s)", c.Phase, c.Message)
		}
		return nil
	})
	t.Logf("message: %s", pc.Status.Chaos.Message)
	if !strings.Contains(pc.Status.Chaos.Message, "PodDisruptionBudget web") {
		t.Errorf("message %q does not name PodDisruptionBudget web", pc.Status.Chaos.Message)
	}
	for _, r := range pc.Status.Chaos.History {
		if len(r.Pods) != 0 || len(r.Refused) == 0 {
			t.Errorf("round %d: pods %v, refused %v; want none evicted, the eviction refused", r.Round, r.Pods, r.Refused)
		}
	}
	if after := kubectl(t, "get", "pods", "-n", ns, "-l", "app=web", "-o", "jsonpath={.items[*].metadata.uid}"); after != before {
		t.Errorf("pods %s after, %s before: want the same pods", after, before)
	}
}

// Issue 35: the CRD refuses bad input at kubectl apply, naming the field.
func TestPodChaos_CRDRefusesBadInput(t *testing.T) {
	t.Parallel() // a server-side dry run: it creates nothing
	good := func() map[string]any {
		return map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}, "interval": "10s"}
	}
	tests := []struct {
		name  string
		patch func(spec map[string]any)
		want  string
	}{
		{name: "interval 0", patch: func(s map[string]any) { s["interval"] = "0s" }, want: "spec.interval: Invalid value"},
		{name: "interval not a duration", patch: func(s map[string]any) { s["interval"] = "often" }, want: "spec.interval"},
		{name: "percent over 100", patch: func(s map[string]any) { s["percent"] = "150%" }, want: "spec.percent"},
		{name: "empty selector", patch: func(s map[string]any) { s["selector"] = map[string]any{} }, want: "spec.selector: Invalid value"},
		{name: "empty matchLabels", patch: func(s map[string]any) { s["selector"] = map[string]any{"matchLabels": map[string]any{}} },
			want: "must not be empty"},
		{name: "no selector", patch: func(s map[string]any) { delete(s, "selector") }, want: "spec.selector: Required value"},
		{name: "unknown action", patch: func(s map[string]any) { s["action"] = "crash" }, want: `spec.action: Unsupported value: "crash"`},
		{name: "count and percent", patch: func(s map[string]any) { s["count"] = 1; s["percent"] = "25%" }, want: "set count or percent, not both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := good()
			tt.patch(spec)
			b, _ := json.Marshal(map[string]any{"apiVersion": "chaos.my.domain/v1", "kind": "PodChaos",
				"metadata": map[string]any{"name": "bad", "namespace": namespace}, "spec": spec})
			file := filepath.Join(t.TempDir(), "bad.json")
			if err := os.WriteFile(file, b, 0o600); err != nil {
				t.Fatal(err)
			}
			_, stderr, err := runFull("kubectl", "apply", "--dry-run=server", "-f", file)
			if err == nil {
				t.Fatalf("kubectl apply accepted %s", b)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("kubectl apply said %q, want it to contain %q", strings.TrimSpace(stderr), tt.want)
			}
		})
	}
	// The good spec passes, so that each refusal above is for its own field.
	b, _ := json.Marshal(map[string]any{"apiVersion": "chaos.my.domain/v1", "kind": "PodChaos",
		"metadata": map[string]any{"name": "good", "namespace": namespace}, "spec": good()})
	file := filepath.Join(t.TempDir(), "good.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	kubectl(t, "apply", "--dry-run=server", "-f", file)
}

// Issue 35: the schedule lives in the PodChaos's status, so a manager killed
// (SIGKILL) after a round, and the one started next, run it to its end with
// neither an extra round nor a missing one: 4 rounds, 4 pods deleted.
func TestPodChaos_ResumesAfterTheManagerIsKilled(t *testing.T) {
	t.Parallel() // its own operator over its own namespace
	const ns = "chaos-failover"
	op := privateOperator(t, ns)
	app := newApp(t, ns, "web")
	app.create(map[string]any{"image": "nginx:1.25", "replicas": 3, "port": 80})
	app.waitServing(1, "nginx:1.25", 3)
	sampler := samplePods(t, ns, "web", 3)

	createPodChaos(t, ns, "kill-one", map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
		"interval": "10s", "duration": "40s"})
	var pc podChaos
	for _, after := range []int{1, 2} {
		eventuallyEvery(t, time.Minute, 200*time.Millisecond, fmt.Sprintf("round %d of PodChaos kill-one", after), func() error {
			if _, err := getJSON(&pc, "podchaos", "kill-one", "-n", ns); err != nil {
				return err
			}
			if pc.Status.Chaos.Rounds < after {
				return fmt.Errorf("%d rounds (%s)", pc.Status.Chaos.Rounds, pc.Status.Chaos.Message)
			}
			return nil
		})
		op.restart(t, "SIGKILL")
	}
	eventuallyEvery(t, 2*time.Minute, 500*time.Millisecond, "PodChaos kill-one Completed", func() error {
		if _, err := getJSON(&pc, "podchaos", "kill-one", "-n", ns); err != nil {
			return err
		}
		if c := pc.Status.Chaos; c.Phase != "Completed" {
			return fmt.Errorf("phase %q (%s), %d rounds", c.Phase, c.Message, c.Rounds)
		}
		return nil
	})
	sampler.stop()
	samples, worst, worstAt, deleted := sampler.result()
	t.Logf("%d samples of the pods, at most %d not Ready (at %s); pods deleted: %v", samples, worst, worstAt, deleted)
	if c := pc.Status.Chaos; c.Rounds != 4 || len(deleted) != 4 {
		t.Errorf("%d rounds, %d pods deleted (%v); want 4 and 4", c.Rounds, len(deleted), deleted)
	}
	if worst > 1 {
		t.Errorf("%d pods were not Ready at once (at %s), want at most 1", worst, worstAt)
	}
}
