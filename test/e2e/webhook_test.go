//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// defaultBudget is the webhook's default budget (admission.DefaultBudget,
// which only cmd/manager imports).
const defaultBudget = 3 * time.Second

// Issue 36, admission-time render: with the webhook (url mode, as a local
// manager serves it), `kubectl apply` of a WebApp change whose objects the
// API server would refuse (an Ingress where a ResourceQuota allows none)
// fails with the API server's reason; an ordinary change is admitted, and
// what the webhook adds to apply's latency is measured; with the manager
// stopped, apply still works (failurePolicy Ignore).
func TestWebhook_RefusesAtApply(t *testing.T) {
	t.Parallel() // its own namespace, operator, port and configuration
	const ns = "rudder-webhook"
	addr, err := freeLocalAddr()
	if err != nil {
		t.Fatal(err)
	}
	port := addr[strings.LastIndex(addr, ":")+1:]
	configuration, secret := "rudder-e2e-"+ns, "rudder-webhook-"+ns
	t.Cleanup(func() {
		_, _ = run("kubectl", "delete", "validatingwebhookconfiguration", configuration, "--ignore-not-found")
		_, _ = run("kubectl", "delete", "secret", secret, "-n", "default", "--ignore-not-found")
	})
	// The refusal is asserted, so its preview must not run out of budget on
	// a busy machine (it is then allowed): the budget is the longest the
	// API server allows, and the latency is measured against the default.
	o := privateOperator(t, ns, "--webhook=url", "--webhook-port="+port,
		"--webhook-configuration="+configuration, "--webhook-cert-secret="+secret, "--webhook-budget=25s")

	shop := func(spec string) string {
		return fmt.Sprintf(`apiVersion: webapp.my.domain/v1
kind: WebApp
metadata: {name: shop, namespace: %s}
spec: {image: "nginx:1.25", port: 80, %s}
`, ns, spec)
	}
	app := newApp(t, ns, "shop")
	apply(t, shop("replicas: 1"))
	app.waitServing(1, "nginx:1.25", 1)
	apply(t, `apiVersion: v1
kind: ResourceQuota
metadata: {name: no-ingress, namespace: rudder-webhook}
spec: {hard: {count/ingresses.networking.k8s.io: "0"}}
`)
	withIngress := shop(`replicas: 1, ingress: {enabled: true, host: shop.example.com}`)
	// The API server calls the webhook once the manager has injected its
	// CA; a server-side dry run asks it without changing the WebApp.
	eventually(t, "the webhook refusing a server-side dry run", func() error {
		err := applyManifest(t, withIngress, "--dry-run=server")
		if err == nil {
			return errors.New("admitted")
		}
		if !strings.Contains(err.Error(), "exceeded quota: no-ingress") {
			t.Fatalf("kubectl apply --dry-run=server: %v; want the quota's refusal", err)
		}
		return nil
	})
	err = applyManifest(t, withIngress)
	want := fmt.Sprintf(`admission webhook "render.rudder.dev" denied the request: rudder: WebApp %[1]s/shop: the API server refuses networking.k8s.io/v1 Ingress %[1]s/shop: ingresses.networking.k8s.io "shop" is forbidden: exceeded quota: no-ingress`, ns)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("kubectl apply of an Ingress the quota refuses: %v; want it refused with %q", err, want)
	}

	// Ordinary changes, timed with the webhook, with the manager stopped
	// (the configuration names a closed port), and without the webhook.
	replicas := 1
	applyChanges := func(n int) []time.Duration {
		var took []time.Duration
		for range n {
			replicas = replicas%3 + 1
			start := time.Now()
			if err := applyManifest(t, shop(fmt.Sprintf("replicas: %d", replicas))); err != nil {
				t.Fatalf("kubectl apply of an ordinary change: %v", err)
			}
			took = append(took, time.Since(start))
		}
		return took
	}
	const n = 9
	with := median(applyChanges(n))
	if err := o.cur.stop(shutdownTimeout); err != nil {
		t.Fatalf("stopping the manager: %v", err)
	}
	stopped := median(applyChanges(n))
	kubectl(t, "delete", "validatingwebhookconfiguration", configuration)
	without := median(applyChanges(n))
	t.Logf("kubectl apply of an ordinary WebApp change, median of %d: %s with the webhook, %s without (the webhook adds %s), %s with the manager stopped",
		n, with.Round(time.Millisecond), without.Round(time.Millisecond), (with - without).Round(time.Millisecond), stopped.Round(time.Millisecond))
	// A figure, not a gate: on a loaded machine a render takes what the
	// control plane gives it (tests here assert no timing).
	if with-without > defaultBudget {
		t.Logf("the webhook adds %s to kubectl apply here, over the default budget of %s: under such load it allows what it could not preview in time", with-without, defaultBudget)
	}
	// The release's uninstall at cleanup needs a manager; without the webhook.
	o.startAgain(t, "--webhook=off")
}

// applyManifest runs kubectl apply of manifest with args and returns its error.
func applyManifest(t *testing.T, manifest string, args ...string) error {
	t.Helper()
	file := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := run("kubectl", append([]string{"apply", "-f", file}, args...)...)
	return err
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
