//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
)

// ownershipWatches resyncs WebApps every 5 s.
const ownershipWatches = "test/e2e/testdata/watches-ownership.yaml"

// ownershipPolicy adds a label, an env var and a sidecar container to every
// Deployment of namespace NAMESPACE at admission.
const ownershipPolicy = "test/e2e/testdata/mutating-policy.yaml"

// Issue 34: drift by field ownership. A MutatingAdmissionPolicy adds a label,
// an env var and a sidecar to every Deployment of the namespace; 20 WebApps
// there become Ready with what the policy adds, and rudder repairs nothing,
// at install or over resyncs: no DriftRepaired event, no object put back and
// no write over resyncs (the manager's requests, counted from its metrics),
// no field of rudder's manager on any Deployment, no generation bumped. Then, under the default
// policy (enabled), replicas taken by another manager (kubectl scale, as an
// autoscaler) and an env var of the chart's changed by kubectl set env are
// put back with the field named in the event; an env var kubectl set env
// adds is another manager's and stays.
func TestDrift_FieldOwnership(t *testing.T) {
	t.Parallel() // its own operator over its own namespace
	const ns = "drift-ssa"
	op := privateOperator(t, ns, "--watches-file="+filepath.Join(root, ownershipWatches))
	policy, err := os.ReadFile(filepath.Join(root, ownershipPolicy))
	if err != nil {
		t.Fatal(err)
	}
	apply(t, strings.ReplaceAll(string(policy), "NAMESPACE", ns))
	t.Cleanup(func() {
		kubectl(t, "delete", "mutatingadmissionpolicybinding,mutatingadmissionpolicy", "rudder-policy-"+ns, "--ignore-not-found")
	})
	eventually(t, "the policy mutating Deployments of "+ns, func() error {
		out, stderr, err := runFull("kubectl", "create", "deployment", "probe", "-n", ns, "--image=probe:1", "--dry-run=server", "-o", "json")
		if err != nil {
			return fmt.Errorf("%w: %s", err, stderr)
		}
		var d appsv1.Deployment
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			return err
		}
		if d.Labels["policy.example.com/injected"] != "true" || len(d.Spec.Template.Spec.Containers) != 2 {
			return fmt.Errorf("a Deployment created in %s: labels %v, %d containers", ns, d.Labels, len(d.Spec.Template.Spec.Containers))
		}
		return nil
	})
	logFrom := op.logSize(t)

	const n = 20
	apps := make([]*lcApp, n)
	for i := range apps {
		apps[i] = newApp(t, ns, fmt.Sprintf("owned-%02d", i))
		apps[i].create(map[string]any{"image": "nginx:1.25", "replicas": 1, "port": 80, "config": map[string]any{"MODE": "prod"}})
	}
	var wg sync.WaitGroup
	for _, a := range apps {
		wg.Go(func() { a.waitServing(1, "nginx:1.25", 1) })
	}
	wg.Wait()
	generations := map[string]int64{}
	for _, a := range apps {
		d := policyApplied(t, a)
		generations[a.name] = d.Generation
	}
	installed := quietWrites(t, op)
	t.Logf("the manager's writes after %d installs: %+v", n, installed)
	if installed.requests < n {
		t.Fatalf("the manager's metrics count %v writes for %d installs: rest_client_requests_total is not what countWrites reads", installed.requests, n)
	}
	if installed.repairs != 0 {
		t.Errorf("rudder_drift_repairs_total after 20 installs: %v, want 0", installed.repairs)
	}

	// Three resyncs and more: nothing written, nothing repaired.
	time.Sleep(16 * time.Second)
	if resynced := countWrites(t, op); resynced != installed {
		t.Errorf("over resyncs of Deployments that only the policy changed, the manager wrote: %+v at install, %+v after; want no write, no repair", installed, resynced)
	}
	for _, a := range apps {
		d := policyApplied(t, a)
		if d.Generation != generations[a.name] {
			t.Errorf("Deployment %s/%s: generation %d, was %d at install: it was written", ns, a.name, d.Generation, generations[a.name])
		}
		for _, e := range d.ManagedFields {
			if e.Manager == "rudder" {
				t.Errorf("Deployment %s/%s was applied by rudder (managed fields %s): a repair wrote it", ns, a.name, toJSON(e))
			}
		}
		noEvent(t, ns, string(a.mustGet().Metadata.UID), "DriftRepaired")
		a.checkSteady(1)
	}
	if log := op.logSince(t, logFrom); strings.Contains(log, "Put back object") {
		t.Errorf("the manager put objects back that only the policy changed:\n%s", grepLines(log, "Put back object"))
	}

	// Another manager takes spec.replicas: put back, named.
	a := apps[0]
	uid := string(a.mustGet().Metadata.UID)
	kubectl(t, "scale", "deployment", a.name, "-n", ns, "--replicas=3")
	a.waitEvent(uid, "DriftRepaired", "Deployment/"+a.name, "spec.replicas")
	checkReplicas(t, ns, 1, a.name)

	// kubectl set env of a variable the chart sets: put back, named.
	kubectl(t, "set", "env", "deployment/"+a.name, "-n", ns, "-c", "webapp", "MODE=debug")
	a.waitEvent(uid, "DriftRepaired", "Deployment/"+a.name, `spec.template.spec.containers[name="webapp"].env[name="MODE"].value`)
	eventually(t, "MODE put back", func() error {
		d, err := a.deployment()
		if err != nil {
			return err
		}
		if v := envOf(d, "webapp", "MODE"); v != "prod" {
			return fmt.Errorf("Deployment %s/%s: MODE=%q", ns, a.name, v)
		}
		return nil
	})

	// kubectl set env of a variable of its own: another manager's field,
	// kept over resyncs without a repair.
	kubectl(t, "set", "env", "deployment/"+a.name, "-n", ns, "-c", "webapp", "EXTRA=1")
	time.Sleep(11 * time.Second)
	d := policyApplied(t, a)
	if v := envOf(d, "webapp", "EXTRA"); v != "1" {
		t.Errorf("Deployment %s/%s: EXTRA=%q, want the 1 kubectl set env added", ns, a.name, v)
	}
	if got := eventsWith(t, ns, uid, "DriftRepaired"); len(got) != 2 {
		t.Errorf("DriftRepaired events about WebApp %s/%s: %s, want the two of replicas and MODE", ns, a.name, toJSON(got))
	}
	a.checkSteady(1)
}

// policyApplied returns a's Deployment, failing t unless it holds what the
// policy adds and the chart's env var.
func policyApplied(t *testing.T, a *lcApp) *appsv1.Deployment {
	t.Helper()
	d, err := a.deployment()
	if err != nil {
		t.Fatal(err)
	}
	var sidecar bool
	for _, c := range d.Spec.Template.Spec.Containers {
		sidecar = sidecar || c.Name == "sidecar" && c.Image == "proxy:1"
	}
	if d.Labels["policy.example.com/injected"] != "true" || !sidecar || envOf(d, "webapp", "INJECTED") != "by-policy" || envOf(d, "webapp", "MODE") != "prod" {
		t.Errorf("Deployment %s/%s lacks what the policy adds or the chart's MODE: labels %v, containers %s", a.ns, a.name, d.Labels, toJSON(d.Spec.Template.Spec.Containers))
	}
	return d
}

// envOf returns the value of env var name of container c of d.
func envOf(d *appsv1.Deployment, c, name string) string {
	for _, ctr := range d.Spec.Template.Spec.Containers {
		if ctr.Name != c {
			continue
		}
		for _, e := range ctr.Env {
			if e.Name == name {
				return e.Value
			}
		}
	}
	return ""
}

// writes counts what a manager has written, from its metrics: the requests
// that can write (POST, PUT, PATCH) less the server-side dry runs of drift
// comparisons, which client-go counts as PATCH requests and store nothing, and
// the objects it put back. DELETE is left out: a manager deletes the Leases
// of dead managers, which other tests leave.
type writes struct{ requests, repairs float64 }

func countWrites(t *testing.T, op *operator) writes {
	t.Helper()
	families := scrape(t, op.cur.metricsAddr)
	var w writes
	for _, method := range []string{"POST", "PUT", "PATCH"} {
		w.requests += sumSamples(families["rest_client_requests_total"], map[string]string{"method": method})
	}
	w.requests -= sumSamples(families["rudder_drift_comparisons_total"], nil)
	w.repairs = sumSamples(families["rudder_drift_repairs_total"], nil)
	return w
}

// quietWrites waits until op has written nothing for 6 s (the installs' last
// status writes done) and returns its count then.
func quietWrites(t *testing.T, op *operator) writes {
	t.Helper()
	var w writes
	eventually(t, "the manager quiet after the installs", func() error {
		before := countWrites(t, op)
		time.Sleep(6 * time.Second)
		if w = countWrites(t, op); w != before {
			return fmt.Errorf("writes %+v, 6 s earlier %+v", w, before)
		}
		return nil
	})
	return w
}
