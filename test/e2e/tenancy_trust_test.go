//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Issue 45, the second tenancy audit: trust nothing a tenant can write. Each
// case is an attack that broke a check on the code before it, tried as the
// tenant of TestTenancy (kubectl --as, rudder's kinds, ConfigMaps and
// creating Secrets in namespace a, nothing more).

// Attack: a forged deployed revision as the base of an upgrade. The tenant
// stores revision 1 of a release that does not exist yet, whose manifest
// lists the platform's Service of namespace a, then creates the WebApp of
// that release, whose chart renders a Service of that name. rudder refuses
// the Service, as it does without the forgery, and neither the install nor
// the WebApp's deletion changes or deletes it.
func testTenancyForgedBase(t *testing.T, tn *tenancy) {
	const name = "front"
	kubectl(t, "create", "service", "clusterip", name, "-n", tn.a, "--tcp=80:8080")
	var before corev1.Service
	mustGetJSON(t, &before, "service", name, "-n", tn.a)
	untouched := func() error { return platformService(tn.a, name, before) }
	hijack := fmt.Sprintf(`---
apiVersion: v1
kind: Service
metadata:
  name: %s
  namespace: %s
spec:
  selector: {app: %s}
  ports: [{port: 80, targetPort: 80}]
`, name, tn.a, name)
	tn.tenantCreates(forgedRevision(t, tn.a, releaseName(name), "webapp", 1, hijack))
	tn.tenantCreates(webAppObject(tn.a, name, nil))
	waitGuarded(t, waitTimeout, "the WebApp refused the platform's Service", guarded(untouched, func() error {
		return conditionIs("webapp", tn.a, name, "Released", metav1.ConditionFalse, []string{"InstallFailed", "RetriesExhausted", "ObjectNotOwned"}, "Service", name)
	}))
	holds(t, 10*time.Second, "the platform's Service", untouched)
	tn.asTenant("delete", "webapp", name, "-n", tn.a, "--wait=true", "--timeout=2m")
	if err := untouched(); err != nil {
		t.Errorf("after the WebApp's deletion: %v: %v", errBreached, err)
	}
}

// platformService says how Service ns/name differs from before, as the
// platform made it: its UID, selector, ports and owners.
func platformService(ns, name string, before corev1.Service) error {
	var svc corev1.Service
	found, err := getJSON(&svc, "service", name, "-n", ns)
	switch {
	case err != nil:
		return err
	case !found:
		return fmt.Errorf("the platform's Service %s/%s was deleted", ns, name)
	case svc.UID != before.UID:
		return fmt.Errorf("the platform's Service %s/%s was deleted and made again", ns, name)
	case toJSON(svc.Spec.Selector) != toJSON(before.Spec.Selector) || toJSON(svc.Spec.Ports) != toJSON(before.Spec.Ports):
		return fmt.Errorf("the platform's Service %s/%s was rewritten: selector %v, ports %s", ns, name, svc.Spec.Selector, toJSON(svc.Spec.Ports))
	case len(svc.OwnerReferences) > 0:
		return fmt.Errorf("the platform's Service %s/%s was adopted: owners %s", ns, name, toJSON(svc.OwnerReferences))
	}
	return nil
}

// Attack: a forged pending revision as a lock on a teammate's release. The
// tenant stores a newer revision of the teammate's WebApp, pending-upgrade,
// with the labels rudder writes; the teammate's spec change still rolls out
// at once.
func testTenancyForgedLock(t *testing.T, tn *tenancy) {
	const name = "team"
	app := newApp(t, tn.a, name)
	kubectl(t, "create", "-f", writeManifest(t, webAppObject(tn.a, name, nil))) // the teammate's
	app.waitServing(1, "nginx:1.21", 1)
	lock := forgedRevision(t, tn.a, app.release(), "webapp", 2, "")
	meta := lock["metadata"].(map[string]any)
	labels := meta["labels"].(map[string]string)
	labels["status"] = "pending-upgrade"
	labels["rudder.dev/holder"], labels["rudder.dev/revision"] = "rudder-0.deadbeef", "2"
	tn.tenantCreates(lock)
	started := time.Now()
	app.patch(`{"spec":{"image":"nginx:1.22"}}`) // by the teammate
	app.waitServing(3, "nginx:1.22", 1)
	t.Logf("the teammate's change rolled out in %s, past the forged pending revision 2", time.Since(started).Round(time.Second))
}

// Attack: a reused name deletes kept data. A Database deleted with its data
// kept (the default) leaves its claim; a new Database of the same name, with
// deletionPolicy Delete, neither starts on that data nor, deleted in turn,
// deletes the claim, which the tenant may not delete.
func testTenancyReusedName(t *testing.T, tn *tenancy) {
	const name = "ledger"
	claim := "data-" + name + "-0"
	db := &nsDatabase{t: t, ns: tn.a, name: name}
	spec := map[string]any{"version": "16", "storageSize": "1Gi", "database": "ledger"}
	tn.tenantCreates(databaseObject(tn.a, name, spec))
	db.waitReady(metav1.ConditionTrue, "Ready")
	var kept corev1.PersistentVolumeClaim
	mustGetJSON(t, &kept, "pvc", claim, "-n", tn.a)
	tn.asTenant("delete", "database", name, "-n", tn.a, "--wait=true", "--timeout=3m")
	keptStill := func() error {
		var pvc corev1.PersistentVolumeClaim
		found, err := getJSON(&pvc, "pvc", claim, "-n", tn.a)
		switch {
		case err != nil:
			return err
		case !found || pvc.UID != kept.UID:
			return fmt.Errorf("the earlier Database's claim %s/%s is gone", tn.a, claim)
		case pvc.DeletionTimestamp != nil:
			return fmt.Errorf("the earlier Database's claim %s/%s is being deleted", tn.a, claim)
		}
		return nil
	}
	if err := keptStill(); err != nil {
		t.Fatalf("after the first Database's deletion: %v", err)
	}

	spec["deletionPolicy"] = "Delete"
	tn.tenantCreates(databaseObject(tn.a, name, spec))
	waitGuarded(t, waitTimeout, "the new Database refusing the earlier one's data", guarded(keptStill, func() error {
		return conditionIs("database", tn.a, name, "StorageSized", metav1.ConditionFalse, []string{"ObjectNotOwned"}, claim, "kubectl annotate")
	}))
	if err := absent(tn.a, "statefulset/"+name); err != nil {
		t.Errorf("the new Database started on the earlier one's data: %v", err)
	}
	tn.asTenant("delete", "database", name, "-n", tn.a, "--wait=true", "--timeout=3m")
	holds(t, 10*time.Second, "the earlier Database's claim after the new one's deletion", keptStill)
}

func databaseObject(ns, name string, spec map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "database.my.domain/v1", "kind": "Database",
		"metadata": map[string]any{"name": name, "namespace": ns}, "spec": spec,
	}
}

// Attack: the annotation picks the namespace's most privileged account. The
// platform keeps an account bound to admin in namespace a, which it allows no
// resource to name; the tenant's WebApp names it, and takes values from a
// Secret only that account may read. Refused, whichever the mode: nothing is
// rendered, and the Secret's value reaches no object.
func testTenancyChosenAccount(t *testing.T, tn *tenancy) {
	const name, admin, secret = "grab", "ci-admin", "platform-token"
	word := randomWord(t)
	kubectl(t, "create", "serviceaccount", admin, "-n", tn.a)
	kubectl(t, "create", "rolebinding", admin, "-n", tn.a, "--clusterrole=admin", "--serviceaccount="+tn.a+":"+admin)
	kubectl(t, "create", "secret", "generic", secret, "-n", tn.a, "--from-literal=token="+word)
	app := webAppObject(tn.a, name, map[string]string{
		"rudder.dev/service-account": admin,
		"rudder.dev/values-from":     fmt.Sprintf("- kind: Secret\n  name: %s\n  valuesKey: token\n  targetPath: config.TOKEN\n", secret),
	})
	tn.tenantCreates(app)
	leaked := func() error {
		var dep appsv1.Deployment
		found, err := getJSON(&dep, "deployment", name, "-n", tn.a)
		if err != nil || !found {
			return err
		}
		if strings.Contains(toJSON(dep), word) {
			return fmt.Errorf("the Secret's value is in Deployment %s/%s", tn.a, name)
		}
		return fmt.Errorf("Deployment %s/%s was rendered for a refused account", tn.a, name)
	}
	waitGuarded(t, waitTimeout, "the account refused", guarded(leaked, func() error {
		return conditionIs("webapp", tn.a, name, "Released", metav1.ConditionFalse, []string{"ServiceAccountNotAllowed"}, admin, "rudder.dev/service-accounts")
	}))
	holds(t, 10*time.Second, "no object of the refused WebApp", leaked)
	// Deleted while refused, it keeps its finalizer; the annotation removed,
	// the deletion completes.
	tn.asTenant("delete", "webapp", name, "-n", tn.a, "--wait=false")
	tn.asTenant("annotate", "webapp", name, "-n", tn.a, "rudder.dev/service-account-")
	eventually(t, "the WebApp gone", func() error { return absent(tn.a, "webapp/"+name) })
}

// Attack: an invalid account falls back to rudder's rights. The tenant's
// WebApp, once served, names no account, and is deleted: rudder acts as no
// one for it, not even to uninstall it; it keeps its finalizer and its
// objects, and says what to fix. Fixed, its deletion completes.
func testTenancyInvalidAccount(t *testing.T, tn *tenancy) {
	const name = "drop"
	app := newApp(t, tn.a, name)
	tn.tenantCreates(webAppObject(tn.a, name, nil))
	app.waitServing(1, "nginx:1.21", 1)
	tn.asTenant("annotate", "webapp", name, "-n", tn.a, "rudder.dev/service-account=Not:An:Account")
	tn.asTenant("delete", "webapp", name, "-n", tn.a, "--wait=false")
	kept := func() error {
		if err := absent(tn.a, "deployment/"+name); err == nil {
			return fmt.Errorf("the WebApp's Deployment %s/%s was uninstalled for a resource whose account is invalid", tn.a, name)
		}
		return nil
	}
	waitGuarded(t, waitTimeout, "the deletion held", guarded(kept, func() error {
		return conditionIs("webapp", tn.a, name, "Released", metav1.ConditionFalse, []string{"ServiceAccountInvalid"}, "Not:An:Account")
	}))
	holds(t, 10*time.Second, "the WebApp's objects while its account is invalid", kept)
	tn.asTenant("annotate", "webapp", name, "-n", tn.a, "rudder.dev/service-account-")
	eventually(t, "the WebApp gone", func() error {
		if err := absent(tn.a, "webapp/"+name, "deployment/"+name); err != nil {
			return err
		}
		return nil
	})
}

// Attack: a Database's credentials name a Secret its account may not read.
// The Database's account is bound to a Role that reads only its own
// credentials Secret; the tenant names the platform's Secret instead. The
// password hook reads it as that account: refused, and no StatefulSet wired
// to it. In lockdown the account is the flag's; acting as itself, rudder
// acts as it for the Database that names it (the Namespace allows it). A
// Database that names no account, rudder acting as itself, reads what rudder
// reads: docs/security.md says so.
func testTenancyCredentials(t *testing.T, tn *tenancy) {
	const name, secret = "billing", "platform-db"
	kubectl(t, "create", "secret", "generic", secret, "-n", tn.a, "--from-literal=username=root", "--from-literal=password="+randomWord(t))
	var annotations map[string]string
	if !tn.mode.lockdown {
		annotations = map[string]string{"rudder.dev/service-account": deployer}
		allowAccounts(t, tn.a, deployer)
	}
	tn.bindDeployerSecrets(tn.a, name+"-credentials")
	obj := databaseObject(tn.a, name, map[string]any{"version": "16", "storageSize": "1Gi", "database": "billing",
		"credentials": map[string]any{"secretName": secret}})
	if annotations != nil {
		obj["metadata"].(map[string]any)["annotations"] = annotations
	}
	tn.tenantCreates(obj)
	wired := func() error {
		if err := absent(tn.a, "statefulset/"+name); err != nil {
			return fmt.Errorf("the StatefulSet of a Database whose credentials its account may not read exists: %w", err)
		}
		return nil
	}
	waitGuarded(t, waitTimeout, "the credentials refused", guarded(wired, func() error {
		return conditionIs("database", tn.a, name, "CredentialsReady", metav1.ConditionFalse, []string{"HookFailed"}, "forbidden", secret)
	}))
	holds(t, 10*time.Second, "no StatefulSet", wired)
}

// bindDeployerSecrets replaces the Database Role's rights on Secrets of ns's
// deployer by get, create and delete on the Secrets named only.
func (tn *tenancy) bindDeployerSecrets(ns string, names ...string) {
	tn.t.Helper()
	if !tn.mode.lockdown {
		tn.bindDeployer(ns, "database")
	}
	role := fmt.Sprintf(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"deployer-secrets","namespace":%q},
"rules":[{"apiGroups":[""],"resources":["secrets"],"verbs":["get","delete"],"resourceNames":%s},{"apiGroups":[""],"resources":["secrets"],"verbs":["create"]}]}`,
		ns, toJSON(names))
	apply(tn.t, role)
	kubectl(tn.t, "create", "rolebinding", "deployer-secrets", "-n", ns, "--role=deployer-secrets", "--serviceaccount="+ns+":"+deployer)
	// The Database Role `rudder rbac` prints lets its account read every Secret: this case's account may not.
	out := kubectl(tn.t, "get", "role", "-n", ns, "-o", "name")
	for _, r := range strings.Fields(out) {
		if strings.Contains(r, "database") {
			kubectl(tn.t, "patch", r, "-n", ns, "--type=json", "-p", secretsRuleRemoved(tn.t, ns, strings.TrimPrefix(r, "role.rbac.authorization.k8s.io/")))
		}
	}
}

// secretsRuleRemoved returns the JSON patch that removes the rule on Secrets
// from Role ns/name.
func secretsRuleRemoved(t *testing.T, ns, name string) string {
	t.Helper()
	var role struct {
		Rules []struct {
			Resources []string `json:"resources"`
		} `json:"rules"`
	}
	mustGetJSON(t, &role, "role", name, "-n", ns)
	for i, r := range role.Rules {
		for _, res := range r.Resources {
			if res == "secrets" {
				return fmt.Sprintf(`[{"op":"remove","path":"/rules/%d"}]`, i)
			}
		}
	}
	t.Fatalf("Role %s/%s has no rule on secrets", ns, name)
	return ""
}

// allowAccounts has Namespace ns allow its resources to name accounts
// (rudder.dev/service-accounts), as the platform does.
func allowAccounts(t *testing.T, ns string, accounts ...string) {
	t.Helper()
	kubectl(t, "annotate", "namespace", ns, "--overwrite", "rudder.dev/service-accounts="+strings.Join(accounts, ","))
}
