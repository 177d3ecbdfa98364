package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/test/testenv"
)

var (
	k8s client.Client
	cfg *rest.Config
	gvk = schema.GroupVersionKind{Group: "chaos.my.domain", Version: "v1", Kind: "PodChaos"}
)

// TestMain runs the hook against a real API server (envtest), with the
// PodChaos CRD of config/crd/bases. It runs no controllers: a deleted pod is
// not replaced unless a test makes its replacement, and a
// PodDisruptionBudget's status allows no disruption.
func TestMain(m *testing.M) {
	if testenv.FuzzOnly() {
		os.Exit(m.Run()) // the fuzz targets read specs: they need no server
	}
	env, c, err := testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg = c
	k8s, err = client.New(cfg, client.Options{Scheme: scheme.Scheme})
	code := 1
	if err == nil {
		code = m.Run()
	} else {
		fmt.Fprintln(os.Stderr, err)
	}
	_ = env.Stop()
	os.Exit(code)
}

// cluster is one test's namespace, PodChaos and clock.
type cluster struct {
	t   *testing.T
	ns  string
	now time.Time
	obj *unstructured.Unstructured
}

func newCluster(t *testing.T, spec map[string]any, pods int) *cluster {
	c := &cluster{t: t, ns: testenv.Namespace(t, k8s, "chaos-"), now: t0}
	for i := range pods {
		c.pod(fmt.Sprintf("web-%d", i), "web")
	}
	c.obj = testenv.NewObject(gvk, c.ns, "kill-one", spec)
	if err := k8s.Create(context.Background(), c.obj); err != nil {
		t.Fatal(err)
	}
	return c
}

// pod creates a Ready pod labeled app=app.
func (c *cluster) pod(name, app string) *corev1.Pod {
	c.t.Helper()
	ctx := context.Background()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: name, Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.25"}}},
	}
	if err := k8s.Create(ctx, p); err != nil {
		c.t.Fatal(err)
	}
	// Running: the Eviction API ignores PodDisruptionBudgets for a Pending pod.
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if err := k8s.Status().Update(ctx, p); err != nil {
		c.t.Fatal(err)
	}
	return p
}

// hook returns a hook as a manager starts it, on c's clock.
func (c *cluster) hook() *Hook {
	return &Hook{Client: k8s, Reader: k8s, Now: func() time.Time { return c.now }}
}

// reconcile runs h as rudder's reconciler does, and writes the status it
// returns (the reconciler's merge patch of status.chaos).
func (c *cluster) reconcile(ctx context.Context, h *Hook) hook.Result {
	c.t.Helper()
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(c.obj), c.obj); err != nil {
		c.t.Fatal(err)
	}
	values, _ := c.obj.Object["spec"].(map[string]any)
	res, err := h.Reconcile(ctx, c.obj, values)
	if err != nil {
		c.t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"status": res.Status})
	if err := k8s.Status().Patch(ctx, c.obj, client.RawPatch(types.MergePatchType, body)); err != nil {
		c.t.Fatal(err)
	}
	return res
}

func (c *cluster) state() State {
	c.t.Helper()
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(c.obj), c.obj); err != nil {
		c.t.Fatal(err)
	}
	return stateOf(c.obj)
}

func (c *cluster) podNames(app string) string {
	c.t.Helper()
	var list corev1.PodList
	if err := k8s.List(context.Background(), &list, client.InNamespace(c.ns), client.MatchingLabels{"app": app}); err != nil {
		c.t.Fatal(err)
	}
	out := make([]string, len(list.Items))
	for i, p := range list.Items {
		out[i] = p.Name
	}
	return strings.Join(out, ",")
}

var killSpec = map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
	"action": "kill", "count": int64(1), "interval": "10s", "duration": "40s", "maxUnavailable": int64(1)}

// A round is written ahead, then acts on one Ready pod of the namespace,
// and its recovery is measured until a replacement is Ready.
func TestHook_Reconcile_Kill(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, killSpec, 4)
	c.pod("other", "other") // not selected
	h := c.hook()

	res := c.reconcile(ctx, h)
	st := c.state()
	if st.Pending == nil || len(st.Pending.Planned) != 1 || st.Rounds != 0 || res.RequeueAfter != actNow {
		t.Fatalf("after the first reconcile: pending %+v, rounds %d, requeue %s; want one pod planned, no round done, requeue %s",
			st.Pending, st.Rounds, res.RequeueAfter, actNow)
	}
	if got := c.podNames("web"); got != "web-0,web-1,web-2,web-3" {
		t.Fatalf("a round written ahead deleted pods: %s left", got)
	}
	victim := st.Pending.Planned[0].Name

	c.now = c.now.Add(20 * time.Millisecond)
	res = c.reconcile(ctx, h)
	st = c.state()
	if st.Pending != nil || st.Rounds != 1 || len(st.History) != 1 || strings.Join(st.History[0].Pods, ",") != victim {
		t.Fatalf("after acting: pending %+v, rounds %d, history %+v; want round 1 on %s", st.Pending, st.Rounds, st.History, victim)
	}
	if strings.Contains(c.podNames("web"), victim) || c.podNames("other") != "other" {
		t.Fatalf("pods left: web %s, other %s; want %s deleted and no other", c.podNames("web"), c.podNames("other"), victim)
	}
	if st.Phase != PhaseRunning || res.RequeueAfter != recoveryPoll || res.Condition.Status != metav1.ConditionUnknown {
		t.Errorf("while recovering: phase %s, requeue %s, condition %s; want Running, %s, Unknown", st.Phase, res.RequeueAfter,
			res.Condition.Status, recoveryPoll)
	}

	c.now = c.now.Add(time.Second) // no replacement yet: the budget is spent
	c.reconcile(ctx, h)
	c.pod("web-4", "web") // the ReplicaSet's replacement
	c.now = c.now.Add(480 * time.Millisecond)
	res = c.reconcile(ctx, h)
	st = c.state()
	if got := st.History[0].Recovery; got != "1.5s" || st.LastRecovery != "1.5s" {
		t.Errorf("recovery %q, lastRecovery %q; want 1.5s", got, st.LastRecovery)
	}
	if res.Condition.Status != metav1.ConditionTrue || res.Condition.Reason != ReasonRecovered {
		t.Errorf("condition %s %s (%s), want True %s", res.Condition.Status, res.Condition.Reason, res.Condition.Message, ReasonRecovered)
	}
	if st.NextRoundAt == nil || !st.NextRoundAt.Time.Equal(t0.Add(10*time.Second)) || res.RequeueAfter != st.NextRoundAt.Sub(c.now) {
		t.Errorf("next round at %v, requeue %s; want %v, in %s", st.NextRoundAt, res.RequeueAfter, t0.Add(10*time.Second), t0.Add(10*time.Second).Sub(c.now))
	}

	// Rounds 2 to 4, each a pair of reconciles; then the schedule is over.
	for round := 2; round <= 4; round++ {
		c.now = t0.Add(time.Duration(round-1) * 10 * time.Second)
		c.reconcile(ctx, h)
		c.reconcile(ctx, h)
		c.pod(fmt.Sprintf("web-%d", round+3), "web")
		c.now = c.now.Add(300 * time.Millisecond)
		c.reconcile(ctx, h)
	}
	c.now = t0.Add(45 * time.Second)
	res = c.reconcile(ctx, h)
	st = c.state()
	if st.Phase != PhaseCompleted || st.Rounds != 4 || st.NextRoundAt != nil || res.RequeueAfter != 0 {
		t.Errorf("at the end: phase %s, rounds %d, next %v, requeue %s; want Completed, 4, none, 0", st.Phase, st.Rounds, st.NextRoundAt, res.RequeueAfter)
	}
	for _, r := range st.History {
		if len(r.Pods) != 1 || r.Recovery == "" {
			t.Errorf("round %d: pods %v, recovery %q; want one pod and a recovery time", r.Round, r.Pods, r.Recovery)
		}
	}
	if got := strings.Count(c.podNames("web"), ",") + 1; got != 4 {
		t.Errorf("%d web pods at the end, want 4", got)
	}
}

// A manager that starts after another wrote a round ahead, or acted on it
// without recording it, finishes that round and runs no other.
func TestHook_Reconcile_ResumesWithoutAnExtraRound(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, killSpec, 4)
	c.reconcile(ctx, c.hook()) // written ahead
	planned := c.state().Pending.Planned[0]
	// The first manager deleted the pod, then died before recording it.
	if err := k8s.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: planned.Name}}); err != nil {
		t.Fatal(err)
	}
	c.pod("web-4", "web")

	c.now = c.now.Add(2 * time.Second)
	c.reconcile(ctx, c.hook()) // the next manager
	st := c.state()
	if st.Rounds != 1 || st.Pending != nil || strings.Join(st.History[0].Pods, ",") != planned.Name {
		t.Fatalf("rounds %d, pending %+v, history %+v; want round 1 recorded on %s", st.Rounds, st.Pending, st.History, planned.Name)
	}
	if got := strings.Count(c.podNames("web"), ",") + 1; got != 4 {
		t.Fatalf("%d web pods, want 4: the next manager acted again", got)
	}
	c.now = c.now.Add(time.Second)
	c.reconcile(ctx, c.hook()) // and again, before the next round's time
	if st := c.state(); st.Rounds != 1 || st.Pending != nil {
		t.Errorf("rounds %d, pending %+v before the second round's time; want 1, none", st.Rounds, st.Pending)
	}
}

// An eviction a PodDisruptionBudget refuses is recorded, and the round is
// done: nothing is deleted and nothing is tried again before the next round.
func TestHook_Reconcile_EvictionRefused(t *testing.T) {
	ctx := context.Background()
	spec := map[string]any{}
	for k, v := range killSpec {
		spec[k] = v
	}
	spec["action"] = "evict"
	c := newCluster(t, spec, 2)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &intstr.IntOrString{IntVal: 0},
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}
	if err := k8s.Create(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	h := c.hook()
	c.reconcile(ctx, h)
	res := c.reconcile(ctx, h)
	st := c.state()
	if st.Phase != PhaseBlocked || st.Rounds != 1 || len(st.History[0].Refused) != 1 || len(st.History[0].Pods) != 0 {
		t.Fatalf("phase %s (%s), rounds %d, history %+v; want Blocked after round 1, one eviction refused", st.Phase, st.Message, st.Rounds, st.History)
	}
	if !strings.Contains(st.Message, "PodDisruptionBudget web allows no disruption") {
		t.Errorf("message %q does not name the PodDisruptionBudget that refused it", st.Message)
	}
	if got := c.podNames("web"); got != "web-0,web-1" {
		t.Errorf("pods %s, want web-0,web-1", got)
	}
	if res.RequeueAfter != 10*time.Second {
		t.Errorf("requeue %s, want the next round's time, 10s", res.RequeueAfter)
	}
	c.now = c.now.Add(time.Second)
	c.reconcile(ctx, h)
	if st := c.state(); st.Rounds != 1 || st.Pending != nil {
		t.Errorf("rounds %d, pending %+v a second later; want no new try before the next round", st.Rounds, st.Pending)
	}
}

// The hook deletes pods as the account rudder acts as for the resource: one
// without the right to is refused, and the round says so.
func TestHook_Reconcile_ActsAsTheTenant(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, killSpec, 2)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "tenant"}}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "read-pods"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "read-pods"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read-pods"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: c.ns, Name: "tenant"}}}
	for _, o := range []client.Object{sa, role, binding} {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	acting := rest.CopyConfig(cfg)
	acting.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + c.ns + ":tenant"}
	tenant, err := client.New(acting, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx = hook.WithActing(ctx, tenant)
	h := c.hook()
	c.reconcile(ctx, h)
	c.reconcile(ctx, h)
	st := c.state()
	if st.Phase != PhaseBlocked || len(st.History) != 1 || len(st.History[0].Refused) != 1 || !strings.Contains(st.History[0].Refused[0], "forbidden") {
		t.Fatalf("phase %s, history %+v; want Blocked, the deletion refused as forbidden", st.Phase, st.History)
	}
	if got := c.podNames("web"); got != "web-0,web-1" {
		t.Errorf("pods %s, want web-0,web-1", got)
	}
}

// Paused, the hook says so and keeps its condition; it reads nothing.
func TestHook_Paused(t *testing.T) {
	obj := testenv.NewObject(gvk, "ns", "kill-one", killSpec)
	_ = unstructured.SetNestedMap(obj.Object, map[string]any{"phase": "Running", "rounds": int64(2)}, "status", StatusKey)
	_ = unstructured.SetNestedSlice(obj.Object, []any{map[string]any{"type": Condition, "status": "True", "reason": ReasonRecovered,
		"message": "fine", "lastTransitionTime": "2026-12-04T12:00:00Z"}}, "status", "conditions")
	res := (&Hook{}).Paused(obj)
	st, _ := res.Status[StatusKey].(map[string]any)
	if st["phase"] != PhasePaused || st["rounds"] != int64(2) {
		t.Errorf("status.chaos %v, want phase Paused and rounds 2", st)
	}
	if res.Condition.Status != metav1.ConditionTrue || res.Condition.Reason != ReasonRecovered {
		t.Errorf("condition %+v, want it as it was", res.Condition)
	}
}
