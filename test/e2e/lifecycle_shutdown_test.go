//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLifecycle_SIGTERMLeavesNoPendingRelease: a wave of upgrades of several
// WebApps is started and the manager gets SIGTERM at once. It must exit 0
// within the shutdown timeout and leave no release pending (running Helm
// actions are canceled and recorded as failed, not left pending-upgrade);
// the next manager brings every WebApp to its spec by upgrading it: the
// serving objects are never deleted (same Deployment UID) and the release
// keeps its history (no uninstall and install again).
func TestLifecycle_SIGTERMLeavesNoPendingRelease(t *testing.T) {
	t.Parallel() // its own operator over its own namespace
	const ns, n = "lc-term", 6
	op := privateOperator(t, ns)
	apps := make([]*lcApp, n)
	for i := range apps {
		apps[i] = newApp(t, ns, fmt.Sprintf("lc-term-%d", i))
		apps[i].create(map[string]any{"image": "nginx:1.21", "replicas": 1, "port": 80})
	}
	deployments := map[string]string{} // WebApp name -> UID of its Deployment
	for _, a := range apps {
		a.waitServing(1, "nginx:1.21", 1)
		d, err := a.deployment()
		if err != nil {
			t.Fatal(err)
		}
		deployments[a.name] = string(d.UID)
	}

	// The wave: every WebApp at once, then SIGTERM as soon as the API server has them.
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for _, a := range apps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := run("kubectl", "patch", "webapp", a.name, "-n", a.ns, "--type", "merge",
				"-p", `{"spec":{"image":"nginx:1.22","replicas":2}}`)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	stopped := op.cur
	if err := stopped.stop(shutdownTimeout); err != nil {
		t.Fatalf("SIGTERM during a wave of upgrades: expected the manager to exit 0 within %s, %v", shutdownTimeout, err)
	}
	if pending := pendingReleases(t, ns); len(pending) > 0 {
		t.Errorf("after SIGTERM: expected `helm list -n lc-term --pending` to be empty, saw %v", pending)
	}
	var states []string
	for _, a := range apps {
		revs := a.mustHistory()
		var s []string
		for _, r := range revs {
			s = append(s, fmt.Sprintf("%d:%s", r.Revision, r.Status))
		}
		states = append(states, a.name+" "+strings.Join(s, ","))
	}
	t.Logf("releases when the manager had stopped: %s; its log has %d lines mentioning a canceled context",
		strings.Join(states, "; "), strings.Count(stopped.tail(1<<20), "context canceled"))

	op.startAgain(t)
	for _, a := range apps {
		a.waitServing(0, "nginx:1.22", 2)
		revs := a.mustHistory()
		for _, r := range revs {
			if isPendingStatus(r.Status) {
				t.Errorf("helm history %s: expected no pending revision, saw %s", a.release(), toJSON(r))
			}
		}
		if len(revs) < 2 || revs[0].Revision != 1 {
			t.Errorf("helm history %s: expected revision 1 and the upgrades after it, saw %s (the release was uninstalled and installed again)",
				a.release(), toJSON(revs))
		}
		if d, err := a.deployment(); err != nil {
			t.Error(err)
		} else if string(d.UID) != deployments[a.name] {
			t.Errorf("Deployment %s: expected the same object (uid %s) upgraded in place, saw a new one (uid %s): the serving app was deleted",
				a.name, deployments[a.name], d.UID)
		}
	}
	if pending := pendingReleases(t, ns); len(pending) > 0 {
		t.Errorf("after the restart: expected `helm list -n lc-term --pending` to be empty, saw %v", pending)
	}
}

func isPendingStatus(s string) bool { return strings.HasPrefix(s, "pending-") || s == "uninstalling" }

// TestLifecycle_NamespaceDeletionCleansUp: deleting a namespace holding
// WebApps and Databases ends with the namespace gone: rudder's finalizer on
// each is removed once its release is uninstalled. It is quiet too (issue 11, defect
// 8): the namespace controller deletes the releases' storage Secrets while
// rudder purges them, and the API server refuses events in a namespace being
// deleted; neither is an error, nor a Database hook's write (its credentials
// Secret, its backup claim) refused there, so the manager logs no error line
// and no reconcile error about the namespace.
//
// These WebApps have no storage, the webapp chart's only object with
// helm.sh/resource-policy: keep, so that half of issue 5's deletion point is
// left to the envtest suite (test/kinds, TestWebApp_KeepsItsClaim).
func TestLifecycle_NamespaceDeletionCleansUp(t *testing.T) {
	t.Parallel() // own namespace; never restarts the manager or the cluster
	const ns = "lc-ns-delete"
	const n = 20
	createNamespace(t, ns)
	apps := make([]*lcApp, n)
	for i := range apps {
		apps[i] = newApp(t, ns, fmt.Sprintf("lc-ns-%02d", i))
		apps[i].create(map[string]any{"image": "nginx:1.21", "replicas": 1, "port": 80})
	}
	dbs := []*nsDatabase{{t: t, ns: ns, name: "lc-ns-db"}, {t: t, ns: ns, name: "lc-ns-db-backup"}}
	dbs[0].create(map[string]any{"version": "16", "storageSize": "1Gi", "database": "orders"})
	dbs[1].create(map[string]any{"version": "16", "storageSize": "1Gi", "database": "orders",
		"backup": map[string]any{"enabled": true, "storageSize": "1Gi"}})
	for _, a := range apps {
		a.waitServing(1, "nginx:1.21", 1)
	}
	for _, db := range dbs {
		db.waitReady(metav1.ConditionTrue, "Ready")
	}
	logged := shared.logSize(t)
	kubectl(t, "delete", "namespace", ns, "--wait=false")
	eventually(t, "namespace "+ns+" gone", func() error {
		if err := namespaceGone(ns); err != nil {
			out, _ := run("kubectl", "get", "webapp,database", "-n", ns, "-o",
				`jsonpath={range .items[*]}{.metadata.name} finalizers={.metadata.finalizers} {.status.phase}: {.status.message}{"\n"}{end}`)
			return fmt.Errorf("%w; left: %s", err, out)
		}
		return nil
	})
	for _, a := range apps {
		if rel := releaseIn(t, ns, a.release()); rel != nil {
			t.Errorf("expected no release %s once namespace %s is gone, saw %s", a.release(), ns, toJSON(rel))
		}
	}
	// The namespace is gone, so rudder reconciled the deletion of every
	// WebApp (it removed their finalizers); it logged no error doing so. The
	// namespace controller deletes the storage Secrets and objects meanwhile,
	// so a reconcile may also find a WebApp not yet deleting and its release
	// gone: its install, refused in a terminating namespace, is no error either.
	var errorLines []string
	for _, line := range strings.Split(shared.logSince(t, logged), "\n") {
		if strings.Contains(line, "\tERROR\t") && strings.Contains(line, ns) {
			errorLines = append(errorLines, line)
		}
	}
	if len(errorLines) > 0 {
		t.Errorf("deleting namespace %s logged %d error lines, want none; the first: %s", ns, len(errorLines), errorLines[0])
	}
}

// releaseIn returns release name in namespace ns as `helm list` shows it
// (any status), or nil.
func releaseIn(t *testing.T, ns, name string) *helmListEntry {
	t.Helper()
	var list []helmListEntry
	if err := json.Unmarshal([]byte(helm(t, "list", "-n", ns, "-o", "json") /* every state, by default in Helm 4 */), &list); err != nil {
		t.Fatalf("decoding helm list: %v", err)
	}
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}

// purgePolicy denies deleting the Helm release storage Secrets in one
// namespace, as a cluster's policy engine might: the uninstall of a release
// there removes its objects, then cannot purge its history.
const purgePolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: lc-deny-helm-purge
spec:
  failurePolicy: Fail
  matchConstraints:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: lc-uninstall-stuck
    resourceRules:
      - apiGroups: [""]
        apiVersions: ["v1"]
        operations: ["DELETE"]
        resources: ["secrets"]
  validations:
    - expression: "!has(oldObject.metadata.labels) || !('owner' in oldObject.metadata.labels) || oldObject.metadata.labels['owner'] != 'helm'"
      message: "lc-deny-helm-purge protects Helm release history in this namespace"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: lc-deny-helm-purge
spec:
  policyName: lc-deny-helm-purge
  validationActions: [Deny]
`

// TestLifecycle_UninstallBlockedShowsWhy: a WebApp whose release history an
// admission policy will not let go is deleted; rudder cannot finish the
// uninstall and says why (Released False, UninstallFailed, the policy's
// message; an UninstallFailed event) while the WebApp waits on its
// finalizer. Once the policy is lifted the uninstall finishes and the WebApp
// goes.
func TestLifecycle_UninstallBlockedShowsWhy(t *testing.T) {
	t.Parallel() // own namespace; never restarts the manager or the cluster
	const ns, policy = "lc-uninstall-stuck", "lc-deny-helm-purge"
	const denied = "lc-deny-helm-purge protects Helm release history in this namespace"
	createNamespace(t, ns)
	a := newApp(t, ns, "lc-stuck")
	a.create(map[string]any{"image": "nginx:1.21", "replicas": 1, "port": 80})
	uid := string(a.waitServing(1, "nginx:1.21", 1).Metadata.UID)

	liftPolicy := func() {
		_, _ = run("kubectl", "delete", "validatingadmissionpolicybinding", policy, "--ignore-not-found")
		_, _ = run("kubectl", "delete", "validatingadmissionpolicy", policy, "--ignore-not-found")
	}
	liftPolicy()
	t.Cleanup(liftPolicy) // before the namespace is deleted
	apply(t, purgePolicy)
	storage := strings.Fields(kubectl(t, "get", "secrets", "-n", ns, "-l", "owner=helm,name="+a.release(), "-o", "name"))
	if len(storage) == 0 {
		t.Fatalf("expected the release storage Secrets of %s (owner=helm), saw none", a.release())
	}
	eventually(t, "the policy in force", func() error {
		_, err := run("kubectl", "delete", storage[0], "-n", ns, "--dry-run=server")
		if err == nil {
			return fmt.Errorf("expected a server-side dry-run delete of %s to be denied with %q, saw it allowed", storage[0], denied)
		}
		if !strings.Contains(err.Error(), denied) {
			return fmt.Errorf("expected a server-side dry-run delete of %s to be denied with %q, saw: %w", storage[0], denied, err)
		}
		return nil
	})

	kubectl(t, "delete", "webapp", a.name, "-n", ns, "--wait=false")
	a.waitCondition("Released", metav1.ConditionFalse, "UninstallFailed", denied)
	a.waitEvent(uid, "UninstallFailed", denied)
	wa := a.mustGet()
	if wa.Metadata.DeletionTimestamp == nil || wa.Status.Phase != "Failed" {
		t.Errorf("while the uninstall is blocked: expected WebApp %s deleting, phase Failed, saw deletionTimestamp %v, phase %q (%s)",
			a.name, wa.Metadata.DeletionTimestamp, wa.Status.Phase, wa.Status.Message)
	}

	liftPolicy()
	eventually(t, "WebApp "+a.name+" and its release gone once the policy is lifted", func() error {
		out, err := run("kubectl", "get", "webapp,deployment,service,secret", "-n", ns, "-o", "name",
			"-l", "owner=helm,name="+a.release())
		if err != nil {
			return err
		}
		left := strings.Fields(out)
		if _, err := a.get(); err == nil {
			left = append(left, "webapp/"+a.name)
		}
		if d, err := a.deployment(); err == nil {
			left = append(left, "deployment/"+d.Name)
		}
		if len(left) > 0 {
			return fmt.Errorf("expected nothing left of WebApp %s, saw %v", a.name, left)
		}
		return nil
	})
}
