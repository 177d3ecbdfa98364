//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Issue 13, namespaces: WATCH_NAMESPACE with one namespace, then a list, then
// empty (all). A WebApp in a namespace the manager does not watch is left
// untouched (no finalizer, no status, no release) even after a reconcile of a
// watched one, asked for later, has run; and the API server shows where the
// manager's caches come from: its open watches of WebApps and of Secrets
// (the release storage) are per namespace, none cluster-wide, until
// WATCH_NAMESPACE is empty.
//
// Not parallel: the count of the API server's open watches must move only by
// this test's managers.
func TestWatchNamespace_OneListAll(t *testing.T) {
	nss := []string{"wn-a", "wn-b", "wn-c"}
	apps := make([]*lcApp, len(nss))
	var op *operator
	// Registered first, so it runs last: the manager of all namespaces
	// uninstalls the releases while the namespaces are deleted.
	t.Cleanup(func() {
		if op != nil && op.cur != nil {
			select {
			case <-op.cur.exited:
			default:
				if err := op.cur.stop(shutdownTimeout); err != nil {
					t.Errorf("stopping the manager: %v", err)
				}
			}
		}
	})
	for i, ns := range nss {
		privateNamespaces.Store(ns, true)
		createNamespace(t, ns)
		apps[i] = newApp(t, ns, "wn-app")
		apps[i].create(map[string]any{"image": "nginx:1.21", "replicas": 1, "port": 80})
	}

	for _, step := range []struct {
		env     string // WATCH_NAMESPACE
		watched int    // of nss
	}{
		{"wn-a", 1},
		{"wn-a,wn-b", 2},
		{"", 3},
	} {
		if op != nil {
			if err := op.cur.stop(shutdownTimeout); err != nil {
				t.Fatalf("stopping the manager of WATCH_NAMESPACE=%q: %v", op.env[0], err)
			}
		}
		before := openWatches(t)
		var err error
		if op, err = startOperatorWith("wn", []string{"WATCH_NAMESPACE=" + step.env}); err != nil {
			t.Fatalf("WATCH_NAMESPACE=%q: %v", step.env, err)
		}
		op.logOnFailure(t)
		for _, a := range apps[:step.watched] {
			a.waitServing(1, "nginx:1.21", 1)
		}
		apps[0].reconciled() // after every event of the others' creation
		for _, a := range apps[step.watched:] {
			if err := untouched(a); err != nil {
				t.Errorf("WATCH_NAMESPACE=%q: %v", step.env, err)
			}
		}
		after := openWatches(t)
		for _, resource := range []string{"webapps", "secrets"} {
			cluster := after[resource+"/cluster"] - before[resource+"/cluster"]
			namespaced := after[resource+"/namespace"] - before[resource+"/namespace"]
			t.Logf("WATCH_NAMESPACE=%q: open watches of %s: %+.0f cluster-wide, %+.0f per namespace", step.env, resource, cluster, namespaced)
			switch {
			case step.env != "" && cluster > 0:
				t.Errorf("WATCH_NAMESPACE=%q: the manager opened %v cluster-wide watches of %s; want only per-namespace ones", step.env, cluster, resource)
			case step.env != "" && namespaced < float64(step.watched):
				t.Errorf("WATCH_NAMESPACE=%q: %v new per-namespace watches of %s, want at least %d (one per namespace)", step.env, namespaced, resource, step.watched)
			case step.env == "" && cluster < 1:
				t.Errorf("WATCH_NAMESPACE empty: no cluster-wide watch of %s opened (%v)", resource, cluster)
			}
		}
	}
}

// untouched says how rudder touched the WebApp: a finalizer, a status or a
// Helm release.
func untouched(a *lcApp) error {
	wa, err := a.get()
	if err != nil {
		return err
	}
	if len(wa.Metadata.Finalizers) > 0 || wa.Status.Phase != "" || len(wa.Status.Conditions) > 0 {
		return fmt.Errorf("WebApp %s/%s, in a namespace not watched, was reconciled: finalizers %v, status %s",
			a.ns, a.name, wa.Metadata.Finalizers, toJSON(wa.Status))
	}
	if revs, err := a.history(); err == nil && len(revs) > 0 {
		return fmt.Errorf("WebApp %s/%s, in a namespace not watched, has a release: %s", a.ns, a.name, toJSON(revs))
	}
	return nil
}

// openWatches reads the API server's open WATCH requests
// (apiserver_longrunning_requests) of WebApps and Secrets, by
// "<resource>/<scope>".
func openWatches(t *testing.T) map[string]float64 {
	t.Helper()
	out := kubectl(t, "get", "--raw", "/metrics")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(out))
	if err != nil {
		t.Fatalf("parsing the API server's metrics: %v", err)
	}
	counts := map[string]float64{}
	f := families["apiserver_longrunning_requests"]
	if f == nil {
		t.Fatal("the API server's metrics have no apiserver_longrunning_requests")
	}
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["verb"] != "WATCH" || (labels["resource"] != "webapps" && labels["resource"] != "secrets") {
			continue
		}
		counts[labels["resource"]+"/"+labels["scope"]] += m.GetGauge().GetValue()
	}
	return counts
}
