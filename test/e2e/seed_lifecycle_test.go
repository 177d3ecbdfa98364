//go:build e2e

package e2e

import (
	"slices"
	"strings"
	"testing"
)

// TestWebApp_SeedLifecycle walks the seed's "应用生命周期" (application
// lifecycle) with its own commands: create my-app, update it, scale it with
// patch and with scale, delete it; after each step the objects, the status
// and the Helm release must agree with the spec.
func TestWebApp_SeedLifecycle(t *testing.T) {
	const name = "my-app"
	release := releaseName(name)
	startClean(t, name)

	// 创建 (create): replicas 3, nginx:latest, port 80.
	seed(t, "kubectl apply -f test/e2e/testdata/seed-my-app-create.yaml")
	wa := waitRunning(t, name, want{replicas: 3, revision: 1})
	uid := string(wa.Metadata.UID)
	checkDeployment(t, name, 3, "nginx:latest", 80)
	checkService(t, name, 80)
	if out := kubectl(t, "get", "ingress", "-n", namespace, "--ignore-not-found", "-o", "name", name); strings.TrimSpace(out) != "" {
		t.Errorf("expected no Ingress (the seed's my-app has no ingress), saw %s", out)
	}
	if !slices.Contains(wa.Metadata.Finalizers, finalizer) {
		t.Errorf("expected finalizer %s on WebApp %s, saw %v", finalizer, name, wa.Metadata.Finalizers)
	}
	if c := condition(wa.Status.Conditions, "Released"); c.Reason != "InstallSucceeded" {
		t.Errorf("expected condition Released with reason InstallSucceeded after the install, saw %s", c.Reason)
	}
	checkHelmRelease(t, release, 1)
	checkHelmValues(t, wa, specOf(t, "test/e2e/testdata/seed-my-app-create.yaml"))
	waitEvent(t, uid, "InstallSucceeded", "Installed revision 1 of release "+release)

	// 更新 (update): replicas 5, nginx:1.25.
	seed(t, "kubectl apply -f test/e2e/testdata/seed-my-app-update.yaml")
	wa = waitRunning(t, name, want{replicas: 5, revision: 2})
	checkDeployment(t, name, 5, "nginx:1.25", 80)
	checkService(t, name, 80)
	checkHelmRelease(t, release, 2)
	checkHelmValues(t, wa, specOf(t, "test/e2e/testdata/seed-my-app-update.yaml"))
	waitEvent(t, uid, "UpgradeSucceeded", "Upgraded to revision 2 of release "+release)

	// 扩缩容 (scaling), first with a merge patch of the spec ...
	seed(t, `kubectl patch webapp my-app --type merge -p '{"spec":{"replicas":10}}'`)
	wa = waitRunning(t, name, want{replicas: 10, revision: 3})
	checkDeployment(t, name, 10, "nginx:1.25", 80)
	checkHelmRelease(t, release, 3)
	checkHelmValues(t, wa, map[string]any{"replicas": 10, "image": "nginx:1.25", "port": 80})

	// ... then through the scale subresource.
	seed(t, "kubectl scale webapp my-app --replicas=5")
	wa = waitRunning(t, name, want{replicas: 5, revision: 4})
	checkDeployment(t, name, 5, "nginx:1.25", 80)
	checkHelmRelease(t, release, 4)
	checkHelmValues(t, wa, map[string]any{"replicas": 5, "image": "nginx:1.25", "port": 80})
	if got := strings.TrimSpace(kubectl(t, "get", "webapp", name, "-n", namespace, "-o", "jsonpath={.status.replicas}")); got != "5" {
		t.Errorf("expected .status.replicas (the scale subresource's status) 5, saw %q", got)
	}

	// 删除 (delete): the release goes, with every object and its history.
	seed(t, "kubectl delete webapp my-app")
	if out := kubectl(t, "get", "webapp", "-n", namespace, "--ignore-not-found", "-o", "name", name); strings.TrimSpace(out) != "" {
		t.Errorf("expected WebApp %s gone once `kubectl delete` returned, saw %s", name, out)
	}
	eventually(t, "no Deployment, Service or Ingress labeled app=my-app", func() error {
		return expectNoResources(runFull("kubectl", "get", "deployment,service,ingress", "-l", "app=my-app"))
	})
	if rel := helmRelease(t, release); rel != nil {
		t.Errorf("expected no release %s in `helm list`, saw it at revision %s (%s)", release, rel.Revision, rel.Status)
	}
	if err := expectNoResources(runFull("kubectl", "get", "secrets", "-l", "owner=helm,name="+release)); err != nil {
		t.Errorf("release storage: %v", err)
	}
	waitEvent(t, uid, "Uninstalled", "Uninstalled release "+release)
}

// expectNoResources checks the result of a `kubectl get` that must find nothing.
func expectNoResources(stdout, stderr string, err error) error {
	if err != nil {
		return err
	}
	if strings.TrimSpace(stdout) != "" || !strings.Contains(stderr, "No resources found") {
		return &unexpectedOutput{want: `nothing ("No resources found")`, stdout: stdout, stderr: stderr}
	}
	return nil
}

// unexpectedOutput is a command output other than the expected one.
type unexpectedOutput struct {
	want, stdout, stderr string
}

func (e *unexpectedOutput) Error() string {
	return "expected " + e.want + ", saw stdout:\n" + e.stdout + "stderr:\n" + e.stderr
}
