//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// labelLeader is the label rudder's leader hook puts on the pod that leads.
const labelLeader = "rudder.dev/leader"

// Issue 35, part 2: a 3-replica WebApp under a LeaderElection has one leader;
// deleting it makes another lead within seconds, twenty times in a row with
// a SIGKILL of the manager after each, and the manager that follows keeps
// the leader. A watch of the pods checks every state they go through, and a
// sampler looks twice a second at the Service's EndpointSlices: never two
// pods labeled, never two endpoints. A leader made
// not Ready is replaced too, and deleting the LeaderElection leaves no label
// and no Lease.
func TestLeaderElection_Failover(t *testing.T) {
	t.Parallel() // its own operator over its own namespace
	ns := "leader-failover"
	op := privateOperator(t, ns)
	app := newApp(t, ns, "active")
	app.create(map[string]any{"image": "nginx:1.25", "replicas": 3, "port": 80})
	app.waitServing(1, "nginx:1.25", 3)
	le := &leaderElection{t: t, ns: ns, name: "active-leader"}
	le.create(map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "active"}},
		"leaseDuration": "6s", "service": map[string]any{"port": 80, "targetPort": 80}})
	leader := le.waitLeader("")

	w := watchLeaders(t, ns, "app=active")
	s := startLeaderSampler(t, ns, "active-leader", "app=active")
	var failovers []time.Duration
	for i := 1; i <= 20; i++ {
		kubectl(t, "delete", "pod", leader, "-n", ns, "--wait=false")
		start := time.Now()
		next := le.waitLabeledOtherThan(leader)
		failovers = append(failovers, time.Since(start))
		leader = le.waitLeader(next)
		op.restart(t, "SIGKILL")
		le.keeps(leader, int64(i), 3*time.Second)
	}
	t.Logf("failover after the leader's deletion, 20 times: %s", durations(failovers))
	for _, d := range failovers {
		if d > 5*time.Second {
			t.Errorf("a failover took %s, want at most 5s: %s", d, durations(failovers))
		}
	}

	// Not Ready: the leader's Ready condition set False (kwok sets it back
	// later; the lead does not return, the new leader keeps it).
	start := time.Now()
	setPodReady(t, ns, leader, corev1.ConditionFalse)
	next := le.waitLabeledOtherThan(leader)
	t.Logf("failover after the leader turned not Ready: %s (pod %s to %s)", time.Since(start).Round(10*time.Millisecond), leader, next)
	le.waitLeader(next)
	s.stop()
	if changes, leaders := w.stop(); leaders < 22 {
		t.Errorf("the leader watch saw %d pods lead over %d changes, want 22: the first leader and one per failover", leaders, changes)
	}

	kubectl(t, "delete", "leaderelection", le.name, "-n", ns, "--timeout=1m")
	if pods := labeledPods(t, ns, "app=active"); len(pods) != 0 {
		t.Errorf("pods %v still labeled %s=true after the LeaderElection's deletion", pods, labelLeader)
	}
	if found, err := getJSON(&coordinationv1.Lease{}, "lease", le.name, "-n", ns); err != nil || found {
		t.Errorf("Lease %s/%s after the LeaderElection's deletion: found %v (%v), want it deleted", ns, le.name, found, err)
	}
}

// Issue 35, part 2: the leader's node is lost (deleted, as when a cloud
// removes a dead machine; its pods remain until the pod garbage collector
// takes them): a pod on another node leads within seconds. The node is the
// test's own kwok node, tainted so that only this test's pod runs there. A
// watch of the pods checks every state they go through: never two labeled.
func TestLeaderElection_NodeLost(t *testing.T) {
	t.Parallel() // its own operator, namespace and node
	ns := "leader-node"
	privateOperator(t, ns)
	node := "rudder-e2e-leader-node"
	createKwokNode(t, node)
	onNode := newApp(t, ns, "on-node")
	onNode.create(map[string]any{"image": "nginx:1.25", "replicas": 1, "port": 80,
		"nodeSelector": map[string]any{"kubernetes.io/hostname": node},
		"tolerations":  []any{map[string]any{"key": outageTaint, "operator": "Exists", "effect": "NoSchedule"}}})
	onNode.waitServing(1, "nginx:1.25", 1)
	elsewhere := newApp(t, ns, "elsewhere")
	elsewhere.create(map[string]any{"image": "nginx:1.25", "replicas": 1, "port": 80})
	elsewhere.waitServing(1, "nginx:1.25", 1)
	le := &leaderElection{t: t, ns: ns, name: "pair"}
	le.create(map[string]any{"selector": map[string]any{"matchExpressions": []any{
		map[string]any{"key": "app", "operator": "In", "values": []any{"on-node", "elsewhere"}}}}})
	leader := le.waitLeader("")
	if !strings.HasPrefix(leader, "on-node-") {
		t.Fatalf("pod %s leads, want the oldest Ready pod, the one of WebApp on-node", leader)
	}
	w := watchLeaders(t, ns, "app in (on-node,elsewhere)")
	kubectl(t, "delete", "node", node, "--wait=false")
	start := time.Now()
	next := le.waitLabeledOtherThan(leader)
	t.Logf("failover after the leader's node was deleted: %s (pod %s to %s)", time.Since(start).Round(10*time.Millisecond), leader, next)
	le.waitLeader(next)
	if changes, leaders := w.stop(); leaders < 2 {
		t.Errorf("the leader watch saw %d pods lead over %d changes, want both the old leader and the new one", leaders, changes)
	}
}

// leaderElection is a LeaderElection of a test.
type leaderElection struct {
	t        *testing.T
	ns, name string
}

func (le *leaderElection) create(spec map[string]any) {
	le.t.Helper()
	b, err := json.Marshal(map[string]any{"apiVersion": "coordination.my.domain/v1", "kind": "LeaderElection",
		"metadata": map[string]any{"name": le.name, "namespace": le.ns}, "spec": spec})
	if err != nil {
		le.t.Fatal(err)
	}
	apply(le.t, string(b))
}

// leaderStatus is what the tests read of a LeaderElection's status.
type leaderStatus struct {
	Status struct {
		Leader        string             `json:"leader"`
		LeaderChanges int64              `json:"leaderChanges"`
		Conditions    []metav1.Condition `json:"conditions"`
	} `json:"status"`
}

// check says how the LeaderElection, its Lease and the pods differ from
// want (any pod when empty) leading alone.
func (le *leaderElection) check(want string) (string, error) {
	var st leaderStatus
	if found, err := getJSON(&st, "leaderelection", le.name, "-n", le.ns); err != nil {
		return "", fmt.Errorf("LeaderElection %s/%s: %w", le.ns, le.name, err)
	} else if !found {
		return "", fmt.Errorf("LeaderElection %s/%s not found", le.ns, le.name)
	}
	leader := st.Status.Leader
	if c := condition(st.Status.Conditions, "Elected"); c == nil || c.Status != metav1.ConditionTrue || leader == "" {
		return "", fmt.Errorf("status.leader %q, condition Elected %+v", leader, c)
	}
	if want != "" && leader != want {
		return "", fmt.Errorf("status.leader %q, want %q", leader, want)
	}
	var lease coordinationv1.Lease
	if found, err := getJSON(&lease, "lease", le.name, "-n", le.ns); err != nil {
		return "", fmt.Errorf("Lease %s/%s: %w", le.ns, le.name, err)
	} else if !found {
		return "", fmt.Errorf("Lease %s/%s not found", le.ns, le.name)
	}
	if h := ptr.Deref(lease.Spec.HolderIdentity, ""); h != leader {
		return "", fmt.Errorf("Lease holder %q, status.leader %q", h, leader)
	}
	if pods := labeledPods(le.t, le.ns, ""); !slices.Equal(pods, []string{leader}) {
		return "", fmt.Errorf("pods labeled %s=true: %v, want only %s", labelLeader, pods, leader)
	}
	return leader, nil
}

// waitLeader waits until want (any pod when empty) leads alone, in status,
// Lease and label, and returns it.
func (le *leaderElection) waitLeader(want string) string {
	le.t.Helper()
	var leader string
	eventuallyWithin(le.t, 2*time.Minute, fmt.Sprintf("LeaderElection %s/%s: one leader %s", le.ns, le.name, want), func() error {
		var err error
		leader, err = le.check(want)
		return err
	})
	return leader
}

// waitLabeledOtherThan waits, polling fast, until a pod other than old
// carries the label, and returns it.
func (le *leaderElection) waitLabeledOtherThan(old string) string {
	le.t.Helper()
	var next string
	eventuallyEvery(le.t, 30*time.Second, 50*time.Millisecond, "a pod other than "+old+" labeled "+labelLeader, func() error {
		pods := labeledPods(le.t, le.ns, "")
		if len(pods) != 1 || pods[0] == old {
			return fmt.Errorf("pods labeled: %v", pods)
		}
		next = pods[0]
		return nil
	})
	return next
}

// keeps checks, for d, that leader leads after changes changes.
func (le *leaderElection) keeps(leader string, changes int64, d time.Duration) {
	le.t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if _, err := le.check(leader); err != nil {
			le.t.Fatalf("after the manager's restart, %s should still lead: %v", leader, err)
		}
	}
	var st leaderStatus
	mustGetJSON(le.t, &st, "leaderelection", le.name, "-n", le.ns)
	if st.Status.LeaderChanges != changes {
		le.t.Errorf("status.leaderChanges %d, want %d", st.Status.LeaderChanges, changes)
	}
}

// labeledPods returns the pods of ns labeled as leader and selected by selector (all when empty).
func labeledPods(t *testing.T, ns, selector string) []string {
	t.Helper()
	sel := labelLeader + "=true"
	if selector != "" {
		sel += "," + selector
	}
	out := kubectl(t, "get", "pods", "-n", ns, "-l", sel, "-o", "jsonpath={.items[*].metadata.name}")
	pods := strings.Fields(out)
	sort.Strings(pods)
	return pods
}

// setPodReady sets pod's Ready condition to status, as a failing readiness probe would.
func setPodReady(t *testing.T, ns, pod string, status corev1.ConditionStatus) {
	t.Helper()
	var p corev1.Pod
	mustGetJSON(t, &p, "pod", pod, "-n", ns)
	for i, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			kubectl(t, "patch", "pod", pod, "-n", ns, "--subresource=status", "--type=json",
				"-p", fmt.Sprintf(`[{"op":"replace","path":"/status/conditions/%d/status","value":%q}]`, i, status))
			return
		}
	}
	t.Fatalf("pod %s/%s has no Ready condition", ns, pod)
}

// leaderSampler looks twice a second at the pods labeled leader and at the
// endpoints of the leader's Service, and fails the test at a sample with two.
type leaderSampler struct {
	t    *testing.T
	done chan struct{}
	wg   sync.WaitGroup
}

func startLeaderSampler(t *testing.T, ns, service, selector string) *leaderSampler {
	s := &leaderSampler{t: t, done: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		samples, missed, endpointsSeen := 0, 0, 0
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-s.done:
				t.Logf("sampler: %d samples of namespace %s (%d missed: kubectl failed), %d with a Service endpoint; never two leaders unless reported above",
					samples, ns, missed, endpointsSeen)
				return
			case <-tick.C:
			}
			pods, endpoints, err := sampleLeaders(ns, service, selector)
			if err != nil {
				missed++
				continue
			}
			samples++
			if endpoints > 0 {
				endpointsSeen++
			}
			if len(pods) > 1 {
				t.Errorf("sample at %s: %d pods labeled %s=true: %v", time.Now().Format(time.StampMilli), len(pods), labelLeader, pods)
			}
			if endpoints > 1 {
				t.Errorf("sample at %s: Service %s/%s has %d endpoints", time.Now().Format(time.StampMilli), ns, service, endpoints)
			}
		}
	}()
	t.Cleanup(s.stop)
	return s
}

func (s *leaderSampler) stop() {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	s.wg.Wait()
}

// sampleLeaders reads, in one request per kind, the pods of ns that
// selector selects and carry the leader label, and the endpoints, ready or
// not, of service's EndpointSlices (none when service is empty).
func sampleLeaders(ns, service, selector string) (pods []string, endpoints int, err error) {
	out, err := run("kubectl", "get", "pods", "-n", ns, "-l", labelLeader+"=true,"+selector, "-o", "jsonpath={.items[*].metadata.name}")
	if err != nil {
		return nil, 0, err
	}
	pods = strings.Fields(out)
	if service == "" {
		return pods, 0, nil
	}
	var list discoveryv1.EndpointSliceList
	if _, err := getJSON(&list, "endpointslices", "-n", ns, "-l", discoveryv1.LabelServiceName+"="+service); err != nil {
		return nil, 0, err
	}
	for _, sl := range list.Items {
		endpoints += len(sl.Endpoints)
	}
	return pods, endpoints, nil
}

// durations formats ds with their minimum, median and maximum.
func durations(ds []time.Duration) string {
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.Round(10 * time.Millisecond).String()
	}
	return fmt.Sprintf("min %s, median %s, max %s (%s)", sorted[0].Round(10*time.Millisecond),
		sorted[len(sorted)/2].Round(10*time.Millisecond), sorted[len(sorted)-1].Round(10*time.Millisecond), strings.Join(parts, " "))
}
