//go:build e2e

package e2e

import (
	"strings"
	"testing"
)

// TestSeed_Troubleshooting runs the diagnosis commands of the seed's
// troubleshooting guide ("故障排查指南") verbatim against rudder deployed as
// config/default deploys it: namespace operators, service account and
// Deployment my-operator (pods labeled name=my-operator), ClusterRole
// my-operator-role. kwok stands in for the kubelet, so the Deployment's pod
// is Running without a container; the manager under test stays the harness's.
// Not run: `kubectl logs` (no container writes logs here), `kubectl get cert`
// (cert-manager's kind; rudder has no webhooks, so problem 3 cannot occur)
// and `kubectl get api-resources` (not a kubectl command; `kubectl
// api-resources | grep webapp` runs in TestWebApp_SeedSampleAndCommands).
func TestSeed_Troubleshooting(t *testing.T) {
	logManagerOnFailure(t)
	kubectl(t, "apply", "-k", "config/default")
	t.Cleanup(func() {
		// Not `delete -k config/default`: that would delete the CRDs, and every custom resource with them.
		_, _ = run("kubectl", "delete", "clusterrolebinding", "my-operator-rolebinding", "--ignore-not-found")
		_, _ = run("kubectl", "delete", "clusterrole", "my-operator-role", "--ignore-not-found")
		// The webhook's configuration names a Service of namespace operators.
		_, _ = run("kubectl", "delete", "validatingwebhookconfiguration", "rudder", "--ignore-not-found")
		_, _ = run("kubectl", "delete", "namespace", "operators", "--ignore-not-found", "--wait=false")
	})

	// 问题1：CRD未创建
	seedGrep(t, "kubectl get crd | grep webapp", "webapps.webapp.my.domain")
	if out := seed(t, "kubectl describe crd webapps.webapp.my.domain"); !strings.Contains(out, "Established") {
		t.Errorf("describe crd: expected the Established condition, saw:\n%s", firstLines(out, 40))
	}

	// 问题2：Operator未协调资源 — the operator's pods, as the guide selects them.
	eventually(t, "the my-operator pod Running in namespace operators", func() error {
		out, errOut, err := runFull("kubectl", "get", "pods", "-n", "operators", "-l", "name=my-operator", "-o",
			"jsonpath={.items[*].status.phase}")
		if err != nil {
			return err
		}
		if strings.TrimSpace(out) != "Running" {
			return &unexpectedOutput{want: "one pod Running", stdout: out, stderr: errOut}
		}
		return nil
	})

	// 问题3：Webhook错误 — rudder installs no webhook.
	for _, line := range []string{
		"kubectl get validatingwebhookconfigurations",
		"kubectl get mutatingwebhookconfigurations",
		"kubectl get svc -n operators",
	} {
		if out, errOut := seedFull(t, line); strings.Contains(out+errOut, "my-operator") {
			t.Errorf("%s: expected nothing of rudder's, saw:\n%s%s", line, out, errOut)
		}
	}

	// 问题4：RBAC权限不足
	seedGrep(t, "kubectl get clusterrole | grep my-operator", "my-operator-role")
	seedGrep(t, "kubectl get clusterrolebinding | grep my-operator", "my-operator-rolebinding")
	if out := seed(t, "kubectl describe clusterrole my-operator-role"); !strings.Contains(out, "webapp.my.domain") {
		t.Errorf("describe clusterrole: expected rules for webapp.my.domain, saw:\n%s", firstLines(out, 40))
	}
	for _, line := range []string{
		"kubectl auth can-i create webapps.webapp.my.domain --as=system:serviceaccount:operators:my-operator",
		// 问题5：资源状态更新失败
		"kubectl auth can-i update webapps/status --as=system:serviceaccount:operators:my-operator",
	} {
		if out := strings.TrimSpace(seed(t, line)); out != "yes" {
			t.Errorf("%s: expected yes, saw %q", line, out)
		}
	}
	// The verbs of the guide's own ClusterRole, each granted.
	for _, verb := range []string{"create", "delete", "get", "list", "patch", "update", "watch"} {
		out, _ := run("kubectl", "auth", "can-i", verb, "webapps.webapp.my.domain", "--as=system:serviceaccount:operators:my-operator")
		if strings.TrimSpace(out) != "yes" {
			t.Errorf("kubectl auth can-i %s webapps.webapp.my.domain as my-operator: %q, want yes", verb, out)
		}
	}
}

// seedGrep runs a seed line of the form `<kubectl command> | grep <word>`:
// the command verbatim, then the grep, which must match a line with want.
func seedGrep(t *testing.T, line, want string) {
	t.Helper()
	command, word, ok := strings.Cut(line, " | grep ")
	if !ok {
		t.Fatalf("%q: expected `<command> | grep <word>`", line)
	}
	var matched []string
	for _, l := range strings.Split(seed(t, command), "\n") {
		if strings.Contains(l, strings.TrimSpace(word)) {
			matched = append(matched, l)
		}
	}
	if !strings.Contains(strings.Join(matched, "\n"), want) {
		t.Errorf("%s: expected a line with %q, saw %q", line, want, matched)
	}
}
