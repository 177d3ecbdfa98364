//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Issue 13, deploy: `make deploy` applies config/default (the Deployment
// rolls out; kwok runs its pod in the restricted namespace operators), then
// a manager runs with the deployed ServiceAccount's credentials only (a
// TokenRequest token in its kubeconfig), as the pod would, with the
// Deployment's --leader-elect in namespace operators. A WebApp, a Database
// with a backup and a Network get Ready: the RBAC of config/rbac is proven by
// use, the metrics' authorization too (only a token bound to the metrics
// reader role scrapes). `make undeploy` then removes rudder and leaves the CRDs.
func TestDeploy_RunsAsItsServiceAccount(t *testing.T) {
	t.Parallel() // its own manager over its own namespace
	const ns = "deploy-e2e"
	deploy := func(verb string) string {
		cmd := exec.Command(filepath.Join(root, "hack", "deploy.sh"), verb)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "IMG=rudder:e2e", "KUBECTL="+filepath.Join(root, "bin", "kubectl"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("hack/deploy.sh %s: %v\n%s", verb, err, out)
		}
		return string(out)
	}
	t.Cleanup(func() {
		out := deploy("undeploy")
		t.Logf("make undeploy:\n%s", out)
		if _, err := run("kubectl", "get", "crd", crdName); err != nil {
			t.Errorf("after undeploy: expected the CRDs to stay, %v", err)
		}
		eventually(t, "namespace operators gone after undeploy", func() error { return namespaceGone("operators") })
	})
	t.Logf("make deploy:\n%s", deploy("deploy"))
	image := strings.TrimSpace(kubectl(t, "get", "deployment", "my-operator", "-n", "operators", "-o", "jsonpath={.spec.template.spec.containers[0].image}"))
	if image != "rudder:e2e" {
		t.Errorf("deployed image %q, want IMG rudder:e2e", image)
	}

	kubeconfig := serviceAccountKubeconfig(t, "operators", "my-operator")
	var op *operator
	t.Cleanup(func() {
		if op != nil && op.cur != nil {
			if err := op.cur.stop(shutdownTimeout); err != nil {
				t.Errorf("stopping the ServiceAccount's manager: %v", err)
			}
		}
	})
	privateNamespaces.Store(ns, true)
	createNamespace(t, ns)
	op, err := startOperatorWith("deploy-sa", []string{"WATCH_NAMESPACE=" + ns, "KUBECONFIG=" + kubeconfig},
		"--leader-elect", "--leader-election-namespace=operators")
	if err != nil {
		t.Fatalf("the manager as ServiceAccount operators/my-operator: %v", err)
	}
	op.logOnFailure(t)

	app := newApp(t, ns, "sa-web")
	app.create(map[string]any{"image": "nginx:1.21", "replicas": 1, "port": 80})
	db := &nsDatabase{t: t, ns: ns, name: "sa-db"}
	db.create(map[string]any{"version": "16", "storageSize": "1Gi", "database": "orders",
		"backup": map[string]any{"enabled": true, "schedule": "0 2 * * *", "storageSize": "1Gi"}})
	createNetwork(t, ns, "sa-net", "10.20.0.0/16", "10.20.0.1")

	app.waitServing(1, "nginx:1.21", 1)
	db.waitReady(metav1.ConditionTrue, "Ready")
	db.backUp("sa")
	waitNetworkReady(t, ns, "sa-net")
	if log := op.cur.tail(1 << 20); strings.Contains(log, "forbidden") {
		t.Errorf("the ServiceAccount's manager was refused something; its log has %q", "forbidden")
	}
	checkMetricsAccess(t, ns, op.cur.metricsAddr)
}

// checkMetricsAccess checks who may scrape the manager at addr, which runs
// with the deployed RBAC: a ServiceAccount of ns bound to the deployed
// ClusterRole my-operator-metrics-reader gets its metrics, one bound to
// nothing is forbidden, no token is unauthorized. The manager's own
// ServiceAccount reviews each token and access (config/rbac's
// metrics_auth_role.yaml); without that right every answer would be 500.
func checkMetricsAccess(t *testing.T, ns, addr string) {
	t.Helper()
	kubectl(t, "create", "serviceaccount", "scraper", "-n", ns)
	kubectl(t, "create", "serviceaccount", "stranger", "-n", ns)
	binding := ns + "-metrics-reader"
	kubectl(t, "create", "clusterrolebinding", binding, "--clusterrole=my-operator-metrics-reader", "--serviceaccount="+ns+":scraper")
	t.Cleanup(func() { _, _ = run("kubectl", "delete", "clusterrolebinding", binding, "--ignore-not-found") })
	scraper := strings.TrimSpace(kubectl(t, "create", "token", "scraper", "-n", ns, "--duration=1h"))
	stranger := strings.TrimSpace(kubectl(t, "create", "token", "stranger", "-n", ns, "--duration=1h"))

	// RBAC sees the new binding a moment later.
	eventually(t, "the metrics reader's scrape answered 200", func() error {
		status, body, err := getMetrics(addr, scraper)
		if err != nil {
			return err
		}
		if status != http.StatusOK || !strings.Contains(body, "controller_runtime_reconcile_total") {
			return fmt.Errorf("status %d: %.300s", status, body)
		}
		return nil
	})
	for _, c := range []struct {
		who   string
		token string
		want  int
	}{
		{"a ServiceAccount without the metrics reader role", stranger, http.StatusForbidden},
		{"no token", "", http.StatusUnauthorized},
	} {
		status, body, err := getMetrics(addr, c.token)
		if err != nil {
			t.Errorf("scraping as %s: %v", c.who, err)
		} else if status != c.want {
			t.Errorf("scraping as %s: status %d, want %d: %.300s", c.who, status, c.want, body)
		}
	}
}

// serviceAccountKubeconfig writes a kubeconfig for the cluster of the
// suite's own, whose only credential is a token of ServiceAccount ns/name
// (TokenRequest, an hour), and returns its path.
func serviceAccountKubeconfig(t *testing.T, ns, name string) string {
	t.Helper()
	token := strings.TrimSpace(kubectl(t, "create", "token", name, "-n", ns, "--duration=1h"))
	admin, err := clientcmd.LoadFromFile(os.Getenv(envKubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	ctx := admin.Contexts[admin.CurrentContext]
	if ctx == nil || admin.Clusters[ctx.Cluster] == nil {
		t.Fatalf("kubeconfig %s: no current context with a cluster", os.Getenv(envKubeconfig))
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["cluster"] = admin.Clusters[ctx.Cluster]
	cfg.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["sa"] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: "sa", Namespace: ns}
	cfg.CurrentContext = "sa"
	file := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, file); err != nil {
		t.Fatal(err)
	}
	return file
}
