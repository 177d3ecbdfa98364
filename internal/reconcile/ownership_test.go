package reconcile_test

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/ssa"
	"github.com/rudder-operator/rudder/test/testenv"
)

// managerRequests counts the API requests of the suite's manager.
var managerRequests requestCounter

// requestCounter counts HTTP requests by method and path, dry runs apart.
type requestCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		key := req.Method + " " + req.URL.Path
		if req.URL.Query().Has("dryRun") {
			key += " (dry run)"
		}
		c.mu.Lock()
		if c.n == nil {
			c.n = map[string]int{}
		}
		c.n[key]++
		c.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

// under returns the requests so far to the objects of namespace ns other
// than the custom resources, by key.
func (c *requestCounter) under(ns string) map[string]int {
	part := "/namespaces/" + ns + "/"
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.n {
		if strings.Contains(k, part) && !strings.Contains(k, "/webapps/") {
			out[k] = v
		}
	}
	return out
}

// newer returns the counts of now that exceed those of before.
func newer(before, now map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range now {
		if v > before[k] {
			out[k] = v - before[k]
		}
	}
	return out
}

// driftRepairedEvents returns the notes of the DriftRepaired events in ns.
func driftRepairedEvents(t *testing.T, ns string) []string {
	t.Helper()
	var list eventsv1.EventList
	if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.Reason == status.ReasonDriftRepaired {
			out = append(out, e.Note)
		}
	}
	return out
}

func container(d *appsv1.Deployment, name string) *corev1.Container {
	for i, c := range d.Spec.Template.Spec.Containers {
		if c.Name == name {
			return &d.Spec.Template.Spec.Containers[i]
		}
	}
	return nil
}

func appliedByRudder(d *appsv1.Deployment) bool {
	for _, e := range d.ManagedFields {
		if e.Manager == ssa.FieldManager {
			return true
		}
	}
	return false
}

// Drift is told by field ownership: what another manager adds (a label, an
// env var, a sidecar, as an admission policy would) is kept and not
// repaired; a field rudder applies edited by another manager is put back,
// named in the event, keeping the other manager's fields; Helm's next
// upgrade (a server-side apply, conflicts forced) works over rudder's apply
// without a fight; and a resync of unchanged objects asks the API server nothing.
func TestReconciler_DriftByFieldOwnership(t *testing.T) {
	ns := namespace(t)
	spec := webappSpec(2, "nginx:1.25")
	spec["config"] = map[string]any{"MODE": "prod"}
	if err := k8s.Create(ctx, testenv.NewObject(webappGVK, ns, "owned", spec)); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "webapp-owned", "1:deployed")
	key := client.ObjectKey{Namespace: ns, Name: "owned"}
	var dep appsv1.Deployment
	testenv.Eventually(t, "Deployment exists", func() error { return k8s.Get(ctx, key, &dep) })
	reconciled(t, webappGVK, ns, "owned")
	t.Logf("requests about the release's objects from install to the first resync: %v", managerRequests.under(ns))

	// A resync with nothing changed: no request about the release's objects
	// (what the cache saves; without it, reads and dry runs, but no write).
	objects := ns
	before := managerRequests.under(objects)
	for range 3 {
		reconciled(t, webappGVK, ns, "owned")
	}
	for k := range newer(before, managerRequests.under(objects)) {
		if cachesOn() || !strings.HasPrefix(k, "GET ") && !strings.HasSuffix(k, "(dry run)") {
			t.Errorf("3 resyncs of unchanged objects made requests: %v", newer(before, managerRequests.under(objects)))
			break
		}
	}

	// Another manager adds a label, an env var and a sidecar.
	if err := k8s.Get(ctx, key, &dep); err != nil {
		t.Fatal(err)
	}
	dep.Labels["policy.example.com/injected"] = "true"
	web := container(&dep, "webapp")
	web.Env = append(web.Env, corev1.EnvVar{Name: "INJECTED", Value: "1"})
	dep.Spec.Template.Spec.Containers = append(dep.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "proxy:1"})
	if err := k8s.Update(ctx, &dep, client.FieldOwner("policy")); err != nil {
		t.Fatal(err)
	}
	before = managerRequests.under(objects)
	reconciled(t, webappGVK, ns, "owned")
	reconciled(t, webappGVK, ns, "owned")
	got := newer(before, managerRequests.under(objects))
	t.Logf("requests about the release's objects after another manager's write, over two reconciles: %v", got)
	if err := k8s.Get(ctx, key, &dep); err != nil {
		t.Fatal(err)
	}
	if ev := driftRepairedEvents(t, ns); len(ev) > 0 || appliedByRudder(&dep) {
		t.Errorf("another manager's additions were repaired: events %q, managed fields %+v", ev, dep.ManagedFields)
	}
	if container(&dep, "sidecar") == nil || len(container(&dep, "webapp").Env) != 2 || dep.Labels["policy.example.com/injected"] != "true" {
		t.Errorf("another manager's additions are gone: %+v", dep)
	}

	// A field rudder applies, edited: put back, named, the rest kept.
	container(&dep, "webapp").Image = "evil:1"
	if err := k8s.Update(ctx, &dep, client.FieldOwner("kubectl-set")); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the image put back", func() error {
		if err := k8s.Get(ctx, key, &dep); err != nil {
			return err
		}
		if img := container(&dep, "webapp").Image; img != "nginx:1.25" {
			return fmt.Errorf("image %s", img)
		}
		return nil
	})
	if container(&dep, "sidecar") == nil || len(container(&dep, "webapp").Env) != 2 || dep.Labels["policy.example.com/injected"] != "true" {
		t.Errorf("the repair removed another manager's additions: %+v", dep)
	}
	field := `spec.template.spec.containers[name="webapp"].image`
	testenv.Eventually(t, "a DriftRepaired event naming "+field, func() error {
		ev := driftRepairedEvents(t, ns)
		if len(ev) != 1 || !strings.Contains(ev[0], "Deployment/owned") || !strings.Contains(ev[0], field) {
			return fmt.Errorf("DriftRepaired events %q", ev)
		}
		return nil
	})

	// Helm's upgrade, a server-side apply with conflicts forced under its
	// own manager, over rudder's repair of the same field: no conflict, the
	// new values land, no repair follows (no loop), and the next repair puts
	// back the new revision.
	patchSpec(t, webappGVK, ns, "owned", `{"image":"nginx:1.26","replicas":3,"config":{"MODE":"staging"}}`)
	waitRevisions(t, ns, "webapp-owned", "1:superseded", "2:deployed")
	reconciled(t, webappGVK, ns, "owned")
	if err := k8s.Get(ctx, key, &dep); err != nil {
		t.Fatal(err)
	}
	web = container(&dep, "webapp")
	if web.Image != "nginx:1.26" || *dep.Spec.Replicas != 3 || web.Env[0].Value != "staging" || container(&dep, "sidecar") == nil {
		t.Errorf("after the upgrade: replicas %d, container %+v, sidecar %v", *dep.Spec.Replicas, web, container(&dep, "sidecar") != nil)
	}
	if ev := driftRepairedEvents(t, ns); len(ev) != 1 {
		t.Errorf("DriftRepaired events after the upgrade: %q, want the one before it", ev)
	}
	dep.Spec.Replicas = new(int32(7))
	if err := k8s.Update(ctx, &dep, client.FieldOwner("scaler")); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "replicas put back to revision 2's", func() error {
		if err := k8s.Get(ctx, key, &dep); err != nil {
			return err
		}
		if *dep.Spec.Replicas != 3 || container(&dep, "webapp").Image != "nginx:1.26" {
			return fmt.Errorf("replicas %d image %s", *dep.Spec.Replicas, container(&dep, "webapp").Image)
		}
		ev := driftRepairedEvents(t, ns)
		if len(ev) != 2 || !strings.Contains(ev[0]+ev[1], ": spec.replicas") {
			return fmt.Errorf("DriftRepaired events %q", ev)
		}
		return nil
	})
	waitRevisions(t, ns, "webapp-owned", "1:superseded", "2:deployed")
}

// admissionPolicy adds a label, an env var and a sidecar container to every
// Deployment of namespace NAMESPACE at admission; the e2e test uses it too.
const admissionPolicy = "../../test/e2e/testdata/mutating-policy.yaml"

// What a MutatingAdmissionPolicy adds at admission is kept, and rudder
// repairs nothing, at install or over reconciles after it: the merge-patch
// repair put such Deployments back right after install, a write and an
// event about nothing. The install's server-side apply is each Deployment's
// one write.
func TestReconciler_KeepsWhatAnAdmissionPolicyAdds(t *testing.T) {
	ns := namespace(t)
	policy, err := os.ReadFile(admissionPolicy)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(strings.ReplaceAll(string(policy), "NAMESPACE", ns), "\n---\n") {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			t.Fatal(err)
		}
		if err := k8s.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = k8s.Delete(ctx, obj) })
	}
	testenv.Eventually(t, "the policy mutating Deployments", func() error {
		probe := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "probe"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "probe"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "probe:1"}}},
				},
			},
		}
		if err := k8s.Create(ctx, probe, client.DryRunAll); err != nil {
			return err
		}
		if container(probe, "sidecar") == nil {
			return fmt.Errorf("a Deployment created has containers %v", probe.Spec.Template.Spec.Containers)
		}
		return nil
	})

	const n = 5
	for i := range n {
		spec := webappSpec(1, "nginx:1.25")
		spec["config"] = map[string]any{"MODE": "prod"}
		if err := k8s.Create(ctx, testenv.NewObject(webappGVK, ns, fmt.Sprintf("app-%d", i), spec)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		waitRevisions(t, ns, fmt.Sprintf("webapp-app-%d", i), "1:deployed")
	}
	for range 2 {
		for i := range n {
			reconciled(t, webappGVK, ns, fmt.Sprintf("app-%d", i))
		}
	}
	requests := managerRequests.under(ns)
	t.Logf("requests about the release's objects: %v", requests)
	// Helm 4 creates each object by server-side apply: one PATCH each, the
	// install's; any other write is a repair.
	for k, v := range requests {
		if !strings.Contains(k, "/deployments/") || strings.HasPrefix(k, "GET ") || strings.HasSuffix(k, "(dry run)") {
			continue
		}
		if !strings.HasPrefix(k, "PATCH ") || v != 1 {
			t.Errorf("%d writes %s, want the install's one apply", v, k)
		}
	}
	if ev := driftRepairedEvents(t, ns); len(ev) > 0 {
		t.Errorf("DriftRepaired events about what the policy added: %q", ev)
	}
	for i := range n {
		var dep appsv1.Deployment
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("app-%d", i)}, &dep); err != nil {
			t.Fatal(err)
		}
		web := container(&dep, "webapp")
		if dep.Labels["policy.example.com/injected"] != "true" || container(&dep, "sidecar") == nil || web == nil || len(web.Env) != 2 {
			t.Errorf("Deployment %s lacks what the policy adds: labels %v, containers %+v", dep.Name, dep.Labels, dep.Spec.Template.Spec.Containers)
		}
		if appliedByRudder(&dep) || dep.Generation != 1 {
			t.Errorf("Deployment %s was written after its install: generation %d, managed fields %+v", dep.Name, dep.Generation, dep.ManagedFields)
		}
	}
}
