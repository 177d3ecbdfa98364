package reconcile_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/reconcile"
	"github.com/rudder-operator/rudder/internal/ssa"
	"github.com/rudder-operator/rudder/internal/testenv"
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
		if e.Reason == reconcile.ReasonDriftRepaired {
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
// upgrade (an update, three-way merge) works over rudder's apply without a
// fight; and a resync of unchanged objects asks the API server nothing.
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

	// A resync with nothing changed: no request about the release's objects.
	objects := ns
	before := managerRequests.under(objects)
	for range 3 {
		reconciled(t, webappGVK, ns, "owned")
	}
	if got := newer(before, managerRequests.under(objects)); len(got) > 0 {
		t.Errorf("3 resyncs of unchanged objects made requests: %v", got)
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

	// Helm's upgrade, a three-way merge under its own manager, over
	// rudder's apply: no conflict, the new values land, no repair follows,
	// and the next repair puts back the new revision.
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
