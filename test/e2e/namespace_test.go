//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// createNamespace creates namespace ns, deleting what an earlier run left of
// it first, and deletes it when the test ends.
func createNamespace(t *testing.T, ns string) {
	t.Helper()
	createNamespaces(t, ns)
}

// createNamespaces is createNamespace for several namespaces, deleted all at
// once when the test ends: one after the other takes as many times longer.
func createNamespaces(t *testing.T, nss ...string) {
	t.Helper()
	for _, ns := range nss {
		if _, private := privateNamespaces.Load(ns); !private && !slices.Contains(sharedNamespaces, ns) {
			t.Fatalf("no operator watches namespace %s: add it to sharedNamespaces, or give the test its own (privateOperator)", ns)
		}
	}
	logManagerOnFailure(t)
	deleteNamespaces(t, nss...)
	for _, ns := range nss {
		kubectl(t, "create", "namespace", ns)
		if err := bindLockdownAccount(ns); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { deleteNamespaces(t, nss...) })
}

// deleteNamespaces deletes nss together and waits until they are gone, each
// as deleteNamespace does when that fails.
func deleteNamespaces(t *testing.T, nss ...string) {
	t.Helper()
	args := append(append([]string{"delete", "namespace"}, nss...), "--ignore-not-found", "--wait=true", "--timeout=2m")
	if _, err := run("kubectl", args...); err == nil {
		return
	}
	for _, ns := range nss {
		deleteNamespace(t, ns)
	}
}

// deleteNamespace deletes ns and waits until it is gone. What keeps it when
// that takes over two minutes is removed by hand: custom resources whose
// finalizer rudder did not remove, which fails the test, and pods the
// kubelet (kwok) never finished deleting, which is no part of rudder's job
// and is only logged.
func deleteNamespace(t *testing.T, ns string) {
	t.Helper()
	_, err := run("kubectl", "delete", "namespace", ns, "--ignore-not-found", "--wait=true", "--timeout=2m")
	if err == nil {
		return
	}
	t.Logf("cleanup: deleting namespace %s: %v: %v", ns, err, namespaceGone(ns))
	out, _ := run("kubectl", "get", "webapp,database,network", "-n", ns, "-o", "name")
	if crs := strings.Fields(out); len(crs) > 0 {
		t.Errorf("cleanup: namespace %s still holds %s after 2 minutes; removing their finalizers by hand", ns, strings.Join(crs, ", "))
		for _, obj := range crs {
			_, _ = run("kubectl", "patch", obj, "-n", ns, "--type", "merge", "-p", `{"metadata":{"finalizers":null}}`)
		}
	}
	if pods := terminatingPods(t, ns); len(pods) > 0 {
		t.Logf("cleanup: the kubelet (kwok) never finished deleting pods %s; deleting them as a kubelet would", strings.Join(pods, ", "))
		_, _ = run("kubectl", "delete", "pods", "-n", ns, "--all", "--force", "--grace-period=0", "--wait=false")
	}
	eventually(t, "namespace "+ns+" gone", func() error { return namespaceGone(ns) })
}

// terminatingPods names the pods of ns that are being deleted, with their
// node.
func terminatingPods(t *testing.T, ns string) []string {
	t.Helper()
	var pods corev1.PodList
	if _, err := getJSON(&pods, "pods", "-n", ns); err != nil {
		t.Logf("cleanup: listing the pods of %s: %v", ns, err)
		return nil
	}
	var out []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			out = append(out, fmt.Sprintf("%s (on %s since %s)", p.Name, p.Spec.NodeName, p.DeletionTimestamp.Format("15:04:05")))
		}
	}
	return out
}

// namespaceGone says whether namespace ns still exists, and when it does,
// what the namespace controller says it waits for.
func namespaceGone(ns string) error {
	var obj corev1.Namespace
	found, err := getJSON(&obj, "namespace", ns)
	if err != nil {
		return err
	}
	if found {
		return fmt.Errorf("expected namespace %s gone, saw it %s%s", ns, obj.Status.Phase, terminationConditions(obj))
	}
	return nil
}

// terminationConditions says what the namespace controller reports it still
// waits for (the NamespaceContentRemaining, NamespaceFinalizersRemaining, ...
// conditions that are True), or nothing.
func terminationConditions(ns corev1.Namespace) string {
	var out []string
	for _, c := range ns.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			out = append(out, fmt.Sprintf("%s: %s", c.Type, c.Message))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return " (" + strings.Join(out, "; ") + ")"
}
