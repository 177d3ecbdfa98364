//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// restrictedNamespace enforces the "restricted" Pod Security Standard.
const restrictedNamespace = "psa-restricted"

// Issue 13, pod security: in a namespace labeled
// pod-security.kubernetes.io/enforce=restricted, where the API server's Pod
// Security admission refuses any pod that breaks the standard, the manager's
// own pod (config/manager, server-side dry run) is admitted, and so is every
// pod the three kinds make by default: a WebApp's, a Database's with its
// metrics sidecar, its backup Job's and a restore Job's. All are Ready or
// complete.
func TestPodSecurity_RestrictedNamespace(t *testing.T) {
	t.Parallel() // own namespace; never restarts the manager or the cluster
	ns := restrictedNamespace
	createNamespace(t, ns)
	kubectl(t, "label", "namespace", ns, "--overwrite",
		"pod-security.kubernetes.io/enforce=restricted", "pod-security.kubernetes.io/enforce-version=latest")

	out := kubectl(t, "apply", "--dry-run=server", "-n", ns, "-f", managerPod(t))
	t.Logf("the manager's pod: %s", strings.TrimSpace(out))

	app := newApp(t, ns, "psa-web")
	app.create(map[string]any{"image": "nginx:1.21", "replicas": 2, "port": 80})
	src := &nsDatabase{t: t, ns: ns, name: "psa-db"}
	src.create(map[string]any{"version": "16", "storageSize": "1Gi", "database": "orders", "monitoring": map[string]any{"enabled": true},
		"backup": map[string]any{"enabled": true, "schedule": "0 2 * * *", "storageSize": "1Gi"}})
	createNetwork(t, ns, "psa-net", "10.10.0.0/16", "10.10.0.1")

	app.waitServing(1, "nginx:1.21", 2)
	src.waitReady(metav1.ConditionTrue, "Ready")
	src.backUp("psa")
	dst := &nsDatabase{t: t, ns: ns, name: "psa-copy"}
	dst.create(map[string]any{"version": "16", "storageSize": "1Gi", "database": "orders", "restore": map[string]any{"from": src.name}})
	dst.waitReady(metav1.ConditionTrue, "Ready")
	waitNetworkReady(t, ns, "psa-net")

	// No controller was refused a pod.
	var events corev1.EventList
	mustGetJSON(t, &events, "events", "-n", ns, "--field-selector", "reason=FailedCreate")
	for _, e := range events.Items {
		t.Errorf("%s %s: %s", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message)
	}
	var pods corev1.PodList
	mustGetJSON(t, &pods, "pods", "-n", ns)
	var names []string
	for _, p := range pods.Items {
		names = append(names, p.Name)
	}
	t.Logf("pods admitted under the restricted standard: %s", strings.Join(names, ", "))
}

// managerPod writes a Pod with the pod template of config/manager's
// Deployment to a file, for a dry run.
func managerPod(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "config", "manager", "manager.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		var d appsv1.Deployment
		if err := dec.Decode(&d); err != nil {
			t.Fatalf("config/manager/manager.yaml: no Deployment found (%v)", err)
		}
		if d.Kind != "Deployment" {
			continue
		}
		pod := corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: "psa-manager", Labels: d.Spec.Template.Labels},
			Spec:       d.Spec.Template.Spec,
		}
		pod.Spec.ServiceAccountName = "" // the dry run is about the pod's security, not its account
		b, err := json.Marshal(pod)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "manager-pod.json")
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return file
	}
}
