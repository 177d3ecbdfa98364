package leader

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/test/testenv"
)

var k8s client.Client

// TestMain runs the hook against a real API server (envtest), which has the
// LeaderElection CRD of config/crd/bases. No kubelet runs: the tests write
// the pods' and nodes' status themselves.
func TestMain(m *testing.M) {
	env, cfg, err := testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
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

var gvk = schema.GroupVersionKind{Group: "coordination.my.domain", Version: "v1", Kind: "LeaderElection"}

// fixture is one namespace with a LeaderElection selecting app=db.
type fixture struct {
	t     *testing.T
	ctx   context.Context
	ns    string
	obj   *unstructured.Unstructured
	clock *clocktesting.FakeClock
	hook  *Hook
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	ns := testenv.Namespace(t, k8s, "leader-")
	obj := testenv.NewObject(gvk, ns, "db", map[string]any{
		"selector": map[string]any{"matchLabels": map[string]any{"app": "db"}}, "leaseDuration": "6s"})
	if err := k8s.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	clock := clocktesting.NewFakeClock(time.Now())
	return &fixture{t: t, ctx: ctx, ns: ns, obj: obj, clock: clock, hook: &Hook{Client: k8s, Reader: k8s, Clock: clock}}
}

// node creates a node, Ready or not.
func (f *fixture) node(name string, ready bool) {
	f.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := k8s.Create(f.ctx, n); err != nil && !apierrors.IsAlreadyExists(err) {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = k8s.Delete(context.Background(), n) })
	f.setNodeReady(name, ready)
}

func (f *fixture) setNodeReady(name string, ready bool) {
	f.t.Helper()
	var n corev1.Node
	if err := k8s.Get(f.ctx, client.ObjectKey{Name: name}, &n); err != nil {
		f.t.Fatal(err)
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status(ready), LastHeartbeatTime: metav1.Now()}}
	if err := k8s.Status().Update(f.ctx, &n); err != nil {
		f.t.Fatal(err)
	}
}

// pod creates a pod of app=db on node, Running and Ready or not.
func (f *fixture) pod(name, node string, ready bool) {
	f.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: map[string]string{"app": "db"}},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}},
	}
	if err := k8s.Create(f.ctx, p); err != nil {
		f.t.Fatal(err)
	}
	f.setReady(name, ready)
	time.Sleep(1100 * time.Millisecond) // creation times, in seconds, order the pods
}

func (f *fixture) setReady(name string, ready bool) {
	f.t.Helper()
	var p corev1.Pod
	if err := k8s.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: name}, &p); err != nil {
		f.t.Fatal(err)
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status(ready)}}
	if err := k8s.Status().Update(f.ctx, &p); err != nil {
		f.t.Fatal(err)
	}
}

func status(b bool) corev1.ConditionStatus {
	if b {
		return corev1.ConditionTrue
	}
	return corev1.ConditionFalse
}

// reconcile runs the hook as rudder does, with the resource's spec as values.
func (f *fixture) reconcile() hook.Result {
	f.t.Helper()
	spec, _, _ := unstructured.NestedMap(f.obj.Object, "spec")
	res, err := f.hook.Reconcile(f.ctx, f.obj, spec)
	if err != nil {
		f.t.Fatalf("Reconcile: %v", err)
	}
	return res
}

// labeled returns the pods carrying the label.
func (f *fixture) labeled() []string {
	f.t.Helper()
	var list corev1.PodList
	if err := k8s.List(f.ctx, &list, client.InNamespace(f.ns), client.MatchingLabels{LabelLeader: "true"}); err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, p := range list.Items {
		out = append(out, p.Name)
	}
	return out
}

func (f *fixture) lease() *coordinationv1.Lease {
	f.t.Helper()
	var l coordinationv1.Lease
	if err := k8s.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "db"}, &l); err != nil {
		f.t.Fatal(err)
	}
	return &l
}

// leads checks that pod alone leads, in result, label and Lease, after
// transitions changes.
func (f *fixture) leads(res hook.Result, pod string, transitions int32) {
	f.t.Helper()
	if res.Condition.Status != metav1.ConditionTrue || res.Condition.Reason != ReasonElected || res.Status["leader"] != pod {
		f.t.Errorf("result: condition %+v, status %v; want Elected with leader %s", res.Condition, res.Status, pod)
	}
	if got := f.labeled(); len(got) != 1 || got[0] != pod {
		f.t.Errorf("pods labeled %v, want only %s", got, pod)
	}
	l := f.lease()
	if ptr.Deref(l.Spec.HolderIdentity, "") != pod || ptr.Deref(l.Spec.LeaseTransitions, -1) != transitions ||
		ptr.Deref(l.Spec.LeaseDurationSeconds, 0) != 6 {
		f.t.Errorf("Lease: holder %v, transitions %v, duration %v; want %s, %d, 6",
			ptr.Deref(l.Spec.HolderIdentity, ""), ptr.Deref(l.Spec.LeaseTransitions, -1), ptr.Deref(l.Spec.LeaseDurationSeconds, 0), pod, transitions)
	}
	if !hook.Controls(f.obj, l) {
		f.t.Errorf("Lease owners %v, want the LeaderElection's controller reference", l.OwnerReferences)
	}
	if res.RequeueAfter != 2*time.Second {
		f.t.Errorf("RequeueAfter %s, want a third of the lease duration, 2s", res.RequeueAfter)
	}
}

func TestHook_Reconcile(t *testing.T) {
	f := newFixture(t)
	f.node("n1", true)
	f.node("n2", true)
	f.pod("old-not-ready", "n1", false)
	f.pod("a", "n1", true)
	f.pod("b", "n2", true)
	f.pod("c", "n2", true)

	f.leads(f.reconcile(), "a", 0) // the oldest Ready pod
	f.leads(f.reconcile(), "a", 0)

	// Renewed once a third of the duration passed, not before.
	renewed := f.lease().Spec.RenewTime.Time
	f.clock.Step(time.Second)
	f.reconcile()
	if got := f.lease().Spec.RenewTime.Time; !got.Equal(renewed) {
		t.Errorf("Lease renewed after 1s of 6s: %s, was %s", got, renewed)
	}
	f.clock.Step(2 * time.Second)
	f.reconcile()
	if got := f.lease().Spec.RenewTime.Time; !got.After(renewed) {
		t.Errorf("Lease not renewed after 3s of 6s: %s", got)
	}

	// Not Ready: the next oldest leads; the label is moved, not copied.
	f.setReady("a", false)
	f.leads(f.reconcile(), "b", 1)
	// Back Ready: b keeps leading.
	f.setReady("a", true)
	f.leads(f.reconcile(), "b", 1)
	// b's node lost (not Ready, then gone): a pod elsewhere leads.
	f.setNodeReady("n2", false)
	f.leads(f.reconcile(), "a", 2)
	f.setNodeReady("n2", true)
	if err := k8s.Delete(f.ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}); err != nil {
		t.Fatal(err)
	}
	res := f.reconcile()
	if res.Status["leader"] != "b" || res.Status["leaderNode"] != "n2" || res.Status["leaderChanges"] != int64(3) {
		t.Errorf("after node n1's deletion: status %v, want leader b on n2 after 3 changes", res.Status)
	}
	f.leads(res, "b", 3)
	// Deleted: the label is off it at once, and the last Ready pod leads.
	if err := k8s.Delete(f.ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: f.ns}}); err != nil {
		t.Fatal(err)
	}
	f.leads(f.reconcile(), "c", 4)

	// No pod Ready: no leader, no label, Elected False.
	f.setReady("c", false)
	res = f.reconcile()
	if res.Condition.Status != metav1.ConditionFalse || res.Condition.Reason != ReasonNoReadyPod || res.Status["leader"] != nil {
		t.Errorf("no pod Ready: condition %+v, status %v; want Elected False (NoReadyPod) and no leader", res.Condition, res.Status)
	}
	if got := f.labeled(); len(got) != 0 {
		t.Errorf("pods labeled %v with no pod Ready", got)
	}
	if !res.BlocksReady {
		t.Error("BlocksReady false: a LeaderElection without a leader would say Ready")
	}
}

// A new hook (a restarted or failed-over manager) keeps the leader the Lease
// names, though an older pod is Ready: nothing is kept in memory.
func TestHook_ReconcileKeepsLeaderAcrossRestarts(t *testing.T) {
	f := newFixture(t)
	f.node("n1", true)
	f.pod("a", "n1", true)
	f.pod("b", "n1", true)
	f.setReady("a", false)
	f.leads(f.reconcile(), "b", 0)
	f.setReady("a", true)
	f.hook = &Hook{Client: k8s, Reader: k8s, Clock: f.clock}
	f.leads(f.reconcile(), "b", 0)

	// A label put on by hand on another pod is taken off.
	var a corev1.Pod
	if err := k8s.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "a"}, &a); err != nil {
		t.Fatal(err)
	}
	a.Labels[LabelLeader] = "true"
	if err := k8s.Update(f.ctx, &a); err != nil {
		t.Fatal(err)
	}
	f.leads(f.reconcile(), "b", 0)
}

func TestHook_ReconcileLeaseNotOwned(t *testing.T) {
	f := newFixture(t)
	f.node("n1", true)
	f.pod("a", "n1", true)
	theirs := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: f.ns},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("someone")}}
	if err := k8s.Create(f.ctx, theirs); err != nil {
		t.Fatal(err)
	}
	res := f.reconcile()
	if res.Condition.Reason != hook.ReasonObjectNotOwned || !strings.Contains(res.Condition.Message, "Lease db") {
		t.Errorf("condition %+v, want ObjectNotOwned naming Lease db", res.Condition)
	}
	if got := f.labeled(); len(got) != 0 {
		t.Errorf("pods labeled %v under a Lease that is not the resource's", got)
	}
	if h := ptr.Deref(f.lease().Spec.HolderIdentity, ""); h != "someone" {
		t.Errorf("their Lease's holder changed to %q", h)
	}
}

func TestHook_Finalize(t *testing.T) {
	f := newFixture(t)
	f.node("n1", true)
	f.pod("a", "n1", true)
	f.leads(f.reconcile(), "a", 0)
	if err := f.hook.Finalize(f.ctx, f.obj); err != nil {
		t.Fatal(err)
	}
	if got := f.labeled(); len(got) != 0 {
		t.Errorf("pods labeled %v after Finalize", got)
	}
	err := k8s.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "db"}, &coordinationv1.Lease{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("Lease after Finalize: %v, want NotFound", err)
	}
	if err := f.hook.Finalize(f.ctx, f.obj); err != nil {
		t.Errorf("Finalize again: %v", err)
	}
}

// The hook writes with the client the context carries (hook.Acting): one
// without the right to patch pods fails, and nothing is labeled.
func TestHook_ReconcileActsAsTheResourcesIdentity(t *testing.T) {
	f := newFixture(t)
	f.node("n1", true)
	f.pod("a", "n1", true)
	ctx := hook.WithActing(f.ctx, refusing{Client: k8s})
	spec, _, _ := unstructured.NestedMap(f.obj.Object, "spec")
	if _, err := f.hook.Reconcile(ctx, f.obj, spec); err == nil || !apierrors.IsForbidden(err) {
		t.Errorf("Reconcile with an acting client that may not write: %v, want forbidden", err)
	}
	if got := f.labeled(); len(got) != 0 {
		t.Errorf("pods labeled %v by rudder's own client instead of the acting one", got)
	}
}

// refusing is an acting client whose writes the API server would forbid.
type refusing struct{ client.Client }

func (refusing) Create(context.Context, client.Object, ...client.CreateOption) error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: "leases"}, "db", fmt.Errorf("no"))
}

func (refusing) Patch(context.Context, client.Object, client.Patch, ...client.PatchOption) error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "a", fmt.Errorf("no"))
}

// The CRD generated from the chart refuses what cannot work, naming the field.
func TestCRD_RefusesBadSpecs(t *testing.T) {
	ns := testenv.Namespace(t, k8s, "leader-crd-")
	sel := map[string]any{"matchLabels": map[string]any{"app": "db"}}
	for _, tc := range []struct {
		name string
		spec map[string]any
		want string
	}{
		{name: "no selector", spec: map[string]any{"leaseDuration": "15s"}, want: "spec.selector: Required value"},
		{name: "empty selector", spec: map[string]any{"selector": map[string]any{}}, want: "spec.selector must not be empty"},
		{name: "empty matchLabels", spec: map[string]any{"selector": map[string]any{"matchLabels": map[string]any{}}},
			want: "spec.selector must not be empty"},
		{name: "zero lease", spec: map[string]any{"selector": sel, "leaseDuration": "0s"}, want: "spec.leaseDuration must be a duration of at least 1s"},
		{name: "lease not a duration", spec: map[string]any{"selector": sel, "leaseDuration": "soon"}, want: "spec.leaseDuration must be a duration of at least 1s"},
		{name: "port out of range", spec: map[string]any{"selector": sel, "service": map[string]any{"port": 70000}}, want: "spec.service.port"},
		{name: "target port zero", spec: map[string]any{"selector": sel, "service": map[string]any{"port": 80, "targetPort": 0}}, want: "spec.service.targetPort"},
		{name: "service without matchLabels", spec: map[string]any{"selector": map[string]any{"matchExpressions": []any{
			map[string]any{"key": "app", "operator": "Exists"}}}, "service": map[string]any{"port": 80}}, want: "spec.service selects the leader by spec.selector.matchLabels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := k8s.Create(context.Background(), testenv.NewObject(gvk, ns, "bad", tc.spec))
			if err == nil || !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("create: %v, want Invalid naming %q", err, tc.want)
			}
		})
	}
	good := testenv.NewObject(gvk, ns, "good", map[string]any{"selector": sel, "leaseDuration": "1500ms",
		"service": map[string]any{"port": 80, "targetPort": 8080}})
	if err := k8s.Create(context.Background(), good); err != nil {
		t.Errorf("a good spec refused: %v", err)
	}
}
