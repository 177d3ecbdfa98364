//go:build e2e

package e2e

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Issue 33, tenancy: a custom resource can do only what its namespace may
// do. The tenant is the user tenant-a (kubectl --as), bound by a Role in its
// namespace a that allows rudder's kinds, ConfigMaps and creating Secrets
// (testdata/tenancy/tenant.yaml), with no rights in namespace b. Each case
// is an attack as the tenant would try it, and checks what it gets: a
// refusal with a named condition, nothing created, changed or read in b. A
// guard checks b at every poll, so that a case fails at once, saying what
// the attack did, when it succeeds.
//
// Every case runs in both modes: rudder acting as itself, and in lockdown
// (--default-service-account=deployer, the account of each tenant namespace
// bound to the Roles `rudder rbac` prints). Each mode has
// its own operator over the namespaces of its cases, which run in parallel.
func TestTenancy(t *testing.T) {
	t.Parallel() // its own operators over its own namespaces
	cases := []struct {
		name string
		run  func(*testing.T, *tenancy)
	}{
		{"forged-rollback", testTenancyForgedRollback},
		{"forged-drift", testTenancyForgedDrift},
		{"values-from", testTenancyValuesFrom},
		{"depends-on", testTenancyDependsOn},
		{"hook-by-name", testTenancyHookByName},
		{"undecodable-storage", testTenancyUndecodableStorage},
		{"service-account", testTenancyServiceAccount},
		{"forged-base", testTenancyForgedBase},
		{"forged-lock", testTenancyForgedLock},
		{"reused-name", testTenancyReusedName},
		{"chosen-account", testTenancyChosenAccount},
		{"invalid-account", testTenancyInvalidAccount},
		{"credentials", testTenancyCredentials},
	}
	for _, m := range []tenancyMode{{name: "self"}, {name: "lockdown", lockdown: true}} {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			var nss []string
			for _, c := range cases {
				a, b := tenancyNamespaces(m, c.name)
				nss = append(nss, a, b)
			}
			op := tenancyOperator(t, m, nss)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.run(t, newTenancy(t, m, op, c.name))
				})
			}
		})
	}
}

// Attacks 1 and 2: a forged revision, rolled back to. The tenant writes a
// Secret shaped like the Helm storage of a newer revision of its WebApp's
// release, whose manifest holds a Role and RoleBinding in b and the admin's
// ConfigMap of b, and annotates rudder.dev/rollback-to to it. rudder
// refuses (RevisionNotSigned, or OutsideNamespace for the objects in b),
// and neither that, nor the upgrade back from the forged revision, nor the
// WebApp's deletion creates, changes or deletes anything in b.
func testTenancyForgedRollback(t *testing.T, tn *tenancy) {
	const name, kept = "shop", "precious"
	app := newApp(t, tn.a, name)
	tn.tenantCreates(webAppObject(tn.a, name, nil))
	app.waitServing(1, "nginx:1.21", 1)
	checkActingAs(t, "webapp", tn.a, name, tn.account(tn.a))

	precious := adminConfigMap(t, tn.b, kept)
	confined := func() error {
		return errors.Join(precious.unchanged(), absent(tn.b, "role/takeover", "rolebinding/takeover"))
	}
	tn.tenantCreates(forgedRevision(t, tn.a, app.release(), "webapp", 2, takeoverManifest(tn.b, kept)))
	tn.asTenant("annotate", "webapp", name, "-n", tn.a, "rudder.dev/rollback-to=2")
	waitGuarded(t, waitTimeout, "the rollback to the forged revision refused", guarded(confined, func() error {
		return conditionIs("webapp", tn.a, name, "Released", metav1.ConditionFalse, []string{"RevisionNotSigned", "OutsideNamespace"})
	}))
	app.reconciled()
	holds(t, 15*time.Second, "namespace "+tn.b+" after the refused rollback", confined)

	t.Logf("the tenant deletes WebApp %s/%s, whose newest revision is the forged one", tn.a, name)
	tn.asTenant("delete", "webapp", name, "-n", tn.a, "--wait=true", "--timeout=2m")
	if err := confined(); err != nil {
		t.Errorf("after the WebApp's deletion: %v: %v", errBreached, err)
	}
}

// Attack 2, the drift path: a forged revision of a Network, whose kind
// keeps another client's revision serving (outOfBand: keep), is reported
// as out of band, and its manifest (objects in b) is never put back by
// drift repair (Drifted says RevisionNotSigned), nor acted on by the
// Network's deletion.
func testTenancyForgedDrift(t *testing.T, tn *tenancy) {
	const name, kept = "edge", "precious"
	tn.tenantCreates(map[string]any{
		"apiVersion": "samplecrd.k8s.io/v1", "kind": "Network",
		"metadata": map[string]any{"name": name, "namespace": tn.a},
		"spec":     map[string]any{"cidr": "10.30.0.0/24", "gateway": "10.30.0.1"},
	})
	waitNetworkReady(t, tn.a, name)
	checkActingAs(t, "network", tn.a, name, tn.account(tn.a))

	precious := adminConfigMap(t, tn.b, kept)
	confined := func() error {
		return errors.Join(precious.unchanged(), absent(tn.b, "role/takeover", "rolebinding/takeover"))
	}
	tn.tenantCreates(forgedRevision(t, tn.a, "network-"+name, "network", 2, takeoverManifest(tn.b, kept)))
	tn.asTenant("annotate", "network", name, "-n", tn.a, "--overwrite",
		"rudder.dev/reconcile-requested-at="+time.Now().UTC().Format(time.RFC3339Nano))
	waitGuarded(t, waitTimeout, "the forged revision reported out of band", guarded(confined, func() error {
		return conditionIs("network", tn.a, name, "OutOfBand", metav1.ConditionTrue, []string{"OutOfBandKept"})
	}))
	waitGuarded(t, waitTimeout, "no drift repair from the forged revision", guarded(confined, func() error {
		return conditionIs("network", tn.a, name, "Drifted", "", []string{"RevisionNotSigned"})
	}))
	holds(t, 15*time.Second, "namespace "+tn.b+" while the forged revision serves", confined)

	tn.asTenant("delete", "network", name, "-n", tn.a, "--wait=true", "--timeout=2m")
	if err := confined(); err != nil {
		t.Errorf("after the Network's deletion: %v: %v", errBreached, err)
	}
}

// Attack 3: rudder.dev/values-from naming a Secret of the tenant's
// namespace that the tenant may not read, placed into the Deployment's
// environment through config. Acting as itself, rudder reads it (the
// documented behavior of that mode: a resource's author reads what rudder
// may read), and says whom it acted as. In lockdown, the account may not
// read it: Released False (Forbidden), and the Deployment never carries the
// value. Either way the value is in no status and no event.
func testTenancyValuesFrom(t *testing.T, tn *tenancy) {
	const name, secret = "leak", "admin-db"
	value := "admin-only-" + randomWord(t)
	kubectl(t, "create", "secret", "generic", secret, "-n", tn.a, "--from-literal=password="+value)
	if _, err := run("kubectl", "--as="+tenantUser, "get", "secret", secret, "-n", tn.a); err == nil {
		t.Fatalf("harness: the tenant can read Secret %s/%s itself", tn.a, secret)
	}
	app := newApp(t, tn.a, name)
	tn.tenantCreates(webAppObject(tn.a, name, map[string]string{"rudder.dev/values-from": `- kind: Secret
  name: ` + secret + `
  valuesKey: password
  targetPath: config.STOLEN
`}))
	if !tn.mode.lockdown {
		app.waitServing(1, "nginx:1.21", 1)
		checkEnv(t, app, map[string]string{"STOLEN": value})
		checkActingAs(t, "webapp", tn.a, name, actingAsSelf)
		t.Logf("acting as itself, rudder read Secret %s/%s for the tenant, as docs/security.md says of that mode", tn.a, secret)
	} else {
		notCopied := func() error {
			var d appsv1.Deployment
			if found, err := getJSON(&d, "deployment", name, "-n", tn.a); err != nil || !found {
				return err
			}
			for _, e := range d.Spec.Template.Spec.Containers[0].Env {
				if e.Value == value {
					return fmt.Errorf("Deployment %s/%s carries the Secret's value in env %s", tn.a, name, e.Name)
				}
			}
			return nil
		}
		waitGuarded(t, waitTimeout, "the release refused for want of rights on Secrets", guarded(notCopied, func() error {
			return conditionIs("webapp", tn.a, name, "Released", metav1.ConditionFalse, []string{"Forbidden"},
				`"secrets"`, serviceAccountUser(tn.a, deployer))
		}))
		holds(t, 10*time.Second, "the Deployment without the Secret's value", notCopied)
		checkActingAs(t, "webapp", tn.a, name, serviceAccountUser(tn.a, deployer))
	}
	wa := app.mustGet()
	if s := toJSON(wa.Status); strings.Contains(s, value) {
		t.Errorf("status shows what the Secret holds: %s", s)
	}
	if evs, err := app.events(string(wa.Metadata.UID)); err != nil || strings.Contains(toJSON(evs), value) {
		t.Errorf("events show what the Secret holds (err %v): %s", err, toJSON(evs))
	}
}

// Attack 4: rudder.dev/depends-on naming a Database of b. It is refused
// (CrossNamespaceRef) and the status says nothing of b: not the Database's
// own conditions (which hold a word only b's admin knows), and not whether
// it exists (the refusal reads the same for one that does not).
func testTenancyDependsOn(t *testing.T, tn *tenancy) {
	word := "b-only-" + randomWord(t)
	if tn.mode.lockdown {
		tn.bindDeployer(tn.b, "database") // b's admin serves its own Database
	}
	// Not Ready: it waits for a WebApp named after the word, which never comes.
	apply(t, toJSON(map[string]any{
		"apiVersion": "database.my.domain/v1", "kind": "Database",
		"metadata": map[string]any{"name": "prod", "namespace": tn.b,
			"annotations": map[string]string{"rudder.dev/depends-on": "webapp/" + word}},
		"spec": map[string]any{"version": "16", "storageSize": "1Gi", "database": "orders"},
	}))
	eventually(t, "Database "+tn.b+"/prod's conditions mentioning "+word, func() error {
		r, err := getResource("database", tn.b, "prod")
		if err != nil {
			return err
		}
		if !strings.Contains(toJSON(r.Status.Conditions), word) {
			return fmt.Errorf("conditions %s", toJSON(r.Status.Conditions))
		}
		return nil
	})

	for _, target := range []string{"prod", "ghost"} {
		tn.tenantCreates(webAppObject(tn.a, "uses-"+target, map[string]string{"rudder.dev/depends-on": tn.b + "/database/" + target}))
	}
	prod, err := getResource("database", tn.b, "prod")
	if err != nil {
		t.Fatal(err)
	}
	leaks := []string{word}
	for _, c := range prod.Status.Conditions {
		if strings.Contains(c.Message, word) {
			leaks = append(leaks, c.Message)
		}
	}
	// What prod says of itself (its messages naming the word only b knows),
	// and not what any resource says, such as "No revision is deployed yet":
	// what the status of a WebApp depending on a Database that does not
	// exist shows as well.
	silent := func() error {
		r, err := getResource("webapp", tn.a, "uses-prod")
		if err != nil {
			return err
		}
		g, err := getResource("webapp", tn.a, "uses-ghost")
		if err != nil {
			return err
		}
		for _, l := range leaks {
			if s := toJSON(r.Status); strings.Contains(s, l) && !strings.Contains(toJSON(g.Status), l) {
				return fmt.Errorf("WebApp %s/uses-prod's status shows what Database %s/prod says of itself (%q): %s", tn.a, tn.b, l, s)
			}
		}
		return nil
	}
	for _, target := range []string{"prod", "ghost"} {
		waitGuarded(t, waitTimeout, "WebApp uses-"+target+"'s reference refused", guarded(silent, func() error {
			return conditionIs("webapp", tn.a, "uses-"+target, "Released", "", []string{"CrossNamespaceRef"})
		}))
	}
	uses, err := getResource("webapp", tn.a, "uses-prod")
	if err != nil {
		t.Fatal(err)
	}
	ghost, err := getResource("webapp", tn.a, "uses-ghost")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := eventsAbout(tn.a, string(uses.Metadata.UID))
	if err != nil {
		t.Fatal(err)
	}
	ghostEvs, err := eventsAbout(tn.a, string(ghost.Metadata.UID))
	if err != nil {
		t.Fatal(err)
	}
	shown, generic := toJSON(uses.Status)+toJSON(evs), toJSON(ghost.Status)+toJSON(ghostEvs)
	for _, l := range leaks {
		if strings.Contains(shown, l) && !strings.Contains(generic, l) {
			t.Errorf("WebApp %s/uses-prod's status or events show what Database %s/prod says of itself (%q): %s", tn.a, tn.b, l, shown)
		}
	}
	msgProd := condition(uses.Status.Conditions, "Released").Message
	msgGhost := condition(ghost.Status.Conditions, "Released").Message
	if strings.ReplaceAll(msgProd, "prod", "ghost") != msgGhost {
		t.Errorf("the refusals differ by more than the name, so they tell whether %s/prod exists:\n  existing: %s\n  missing:  %s", tn.b, msgProd, msgGhost)
	}
	if err := absent(tn.a, "deployment/uses-prod", "deployment/uses-ghost"); err != nil {
		t.Errorf("a WebApp with a refused reference was installed: %v", err)
	}
}

// Attack 5: hooks act on objects by name. The admin's CronJob
// reports-backup, made before the tenant's Database reports with backups
// enabled, is left alone by the backup hook (BackedUp False,
// ObjectNotOwned, naming it): not changed, not adopted, not deleted when
// backups are turned off or the Database is deleted.
func testTenancyHookByName(t *testing.T, tn *tenancy) {
	const name, cronJob, schedule = "reports", "reports-backup", "17 3 * * *"
	kubectl(t, "create", "cronjob", cronJob, "-n", tn.a, "--image=busybox:1.36", "--schedule="+schedule, "--", "/bin/true")
	var before batchv1.CronJob
	mustGetJSON(t, &before, "cronjob", cronJob, "-n", tn.a)
	untouched := func() error {
		var cj batchv1.CronJob
		found, err := getJSON(&cj, "cronjob", cronJob, "-n", tn.a)
		switch {
		case err != nil:
			return err
		case !found:
			return fmt.Errorf("the admin's CronJob %s/%s was deleted", tn.a, cronJob)
		case cj.UID != before.UID:
			return fmt.Errorf("the admin's CronJob %s/%s was deleted and made again", tn.a, cronJob)
		case cj.Spec.Schedule != schedule || cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image != "busybox:1.36":
			return fmt.Errorf("the admin's CronJob %s/%s was rewritten: schedule %q, image %q", tn.a, cronJob,
				cj.Spec.Schedule, cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image)
		case len(cj.OwnerReferences) > 0:
			return fmt.Errorf("the admin's CronJob %s/%s was adopted: owners %s", tn.a, cronJob, toJSON(cj.OwnerReferences))
		}
		return nil
	}
	db := &nsDatabase{t: t, ns: tn.a, name: name}
	tn.tenantCreates(map[string]any{
		"apiVersion": "database.my.domain/v1", "kind": "Database",
		"metadata": map[string]any{"name": name, "namespace": tn.a},
		"spec": map[string]any{"version": "16", "storageSize": "1Gi", "database": "orders",
			"backup": map[string]any{"enabled": true, "storageSize": "1Gi"}},
	})
	waitGuarded(t, 3*time.Minute, "the backup hook refusing the admin's CronJob", guarded(untouched, func() error {
		return conditionIs("database", tn.a, name, "BackedUp", metav1.ConditionFalse, []string{"ObjectNotOwned"}, cronJob)
	}))
	checkActingAs(t, "database", tn.a, name, tn.account(tn.a))

	tn.asTenant("patch", "database", name, "-n", tn.a, "--type", "merge", "-p", `{"spec":{"backup":{"enabled":false}}}`)
	db.waitReady(metav1.ConditionTrue, "Ready") // at the new generation: the hook has run
	holds(t, 10*time.Second, "the admin's CronJob after backups were turned off", untouched)
	tn.asTenant("delete", "database", name, "-n", tn.a, "--wait=true", "--timeout=3m")
	if err := untouched(); err != nil {
		t.Errorf("after the Database's deletion: %v: %v", errBreached, err)
	}
}

// Attack 7: Helm storage Secrets that do not decode, for a WebApp's
// release: one whose body is not base64, one whose JSON is not a release. A
// condition names the Secret, the manager does not panic on it, and the
// WebApp's deletion still completes within a minute.
func testTenancyUndecodableStorage(t *testing.T, tn *tenancy) {
	apps := []struct {
		name string
		body []byte
	}{
		{"junk-base64", []byte("this is not a Helm release")},
		{"junk-json", []byte(base64.StdEncoding.EncodeToString(gzipped(t, []byte(`{"name": 42}`))))},
	}
	for _, a := range apps {
		tn.tenantCreates(webAppObject(tn.a, a.name, nil))
	}
	for _, a := range apps {
		newApp(t, tn.a, a.name).waitServing(1, "nginx:1.21", 1)
	}
	logFrom := tn.op.logSize(t)
	secrets := map[string]string{}
	for _, a := range apps {
		garbage := storageSecret(tn.a, releaseName(a.name), 2, a.body)
		secrets[a.name] = garbage["metadata"].(map[string]any)["name"].(string)
		tn.tenantCreates(garbage)
		tn.asTenant("annotate", "webapp", a.name, "-n", tn.a, "--overwrite",
			"rudder.dev/reconcile-requested-at="+time.Now().UTC().Format(time.RFC3339Nano))
	}
	for _, a := range apps {
		secret := secrets[a.name]
		if err := within(waitTimeout, func() error {
			r, err := getResource("webapp", tn.a, a.name)
			if err != nil {
				return err
			}
			for _, c := range r.Status.Conditions {
				if strings.Contains(c.Message, secret) {
					t.Logf("condition %s %s (%s) names Secret %s: %s", c.Type, c.Status, c.Reason, secret, c.Message)
					return nil
				}
			}
			return fmt.Errorf("no condition names Secret %s; conditions %s", secret, toJSON(r.Status.Conditions))
		}); err != nil {
			t.Errorf("WebApp %s/%s: waiting for a condition naming the undecodable storage Secret: %v", tn.a, a.name, err)
		}
	}
	for _, a := range apps {
		start := time.Now()
		if _, err := run("kubectl", "--as="+tenantUser, "delete", "webapp", a.name, "-n", tn.a, "--wait=true", "--timeout=60s"); err != nil {
			r, _ := getResource("webapp", tn.a, a.name)
			t.Errorf("kubectl delete webapp %s/%s did not complete within a minute: %v; the WebApp: %s", tn.a, a.name, err, toJSON(r))
			// Let the namespace go: the finalizer is what this case is about.
			_, _ = run("kubectl", "patch", "webapp", a.name, "-n", tn.a, "--type", "merge", "-p", `{"metadata":{"finalizers":null}}`)
			continue
		}
		t.Logf("kubectl delete webapp %s/%s completed in %s", tn.a, a.name, time.Since(start).Round(100*time.Millisecond))
	}
	ours := grepLines(tn.op.logSince(t, logFrom), `"namespace": "`+tn.a+`"`)
	if panics := grepLines(ours, "Observed a panic"); panics != "" {
		t.Errorf("the manager panicked reconciling a WebApp of %s with an undecodable storage Secret, %d times; the first: %.600s",
			tn.a, strings.Count(panics, "\n")+1, panics)
	}
}

// Attack 8: what the account may not do. A WebApp whose account has the
// Role of its kind becomes Ready, acting as that account; the same WebApp
// in a namespace whose account lacks the Role is refused (Forbidden, with
// the API server's message naming the account, the verb and the resource),
// retried with the bounded backoff and no more. In lockdown the account is
// the flag's; acting as itself, rudder takes it from the annotation
// rudder.dev/service-account, and a WebApp without it says rudder acted as
// itself.
func testTenancyServiceAccount(t *testing.T, tn *tenancy) {
	var annotations map[string]string
	if !tn.mode.lockdown {
		annotations = map[string]string{"rudder.dev/service-account": deployer}
		allowAccounts(t, tn.a, deployer) // the platform's choice (docs/security.md)
		allowAccounts(t, tn.b, deployer)
		tn.bindDeployer(tn.a, deployerKinds("service-account")...)
		plain := newApp(t, tn.a, "plain")
		tn.tenantCreates(webAppObject(tn.a, "plain", nil))
		plain.waitServing(1, "nginx:1.21", 1)
		checkActingAs(t, "webapp", tn.a, "plain", actingAsSelf)
	}
	ok := newApp(t, tn.a, "ok")
	tn.tenantCreates(webAppObject(tn.a, "ok", annotations))
	ok.waitServing(1, "nginx:1.21", 1)
	checkActingAs(t, "webapp", tn.a, "ok", serviceAccountUser(tn.a, deployer))

	// In b, whose account has no Role: made by b's admin (the tenant may not).
	kubectl(t, "create", "serviceaccount", deployer, "-n", tn.b)
	logFrom := tn.op.logSize(t)
	apply(t, toJSON(webAppObject(tn.b, "denied", annotations)))
	account := serviceAccountUser(tn.b, deployer)
	waitGuarded(t, waitTimeout, "the release refused as "+account, func() error {
		return conditionIs("webapp", tn.b, "denied", "Released", metav1.ConditionFalse, []string{"Forbidden"},
			`User "`+account+`" cannot `, ` resource "`, `in the namespace "`+tn.b+`"`)
	})
	checkActingAs(t, "webapp", tn.b, "denied", account)
	denied, err := getResource("webapp", tn.b, "denied")
	if err != nil {
		t.Fatal(err)
	}
	const window = 60 * time.Second
	t.Logf("counting the attempts for %s", window)
	time.Sleep(window)
	evs, err := eventsAbout(tn.b, string(denied.Metadata.UID))
	if err != nil {
		t.Fatal(err)
	}
	warnings := occurrences(evs, func(e corev1.Event) bool { return e.Type == corev1.EventTypeWarning })
	attempts := helmAttempts(tn.op.logSince(t, logFrom), tn.b, "denied")
	t.Logf("WebApp %s/denied, from its creation to %s after the first refusal: %d warning events, %d Helm steps planned or failed in the manager's log",
		tn.b, window, warnings, attempts)
	if n := max(warnings, attempts); n > 4 || n == 0 {
		t.Errorf("WebApp %s/denied: %d attempts (the larger of %d warning events and %d Helm steps logged); want 1 to 4, the bounded backoff's; events: %s",
			tn.b, n, warnings, attempts, toJSON(evs))
	}
}

// helmAttempts counts the Helm actions the manager log shows planned for
// the resource ns/name: its install, reinstall or upgrade steps.
func helmAttempts(log, ns, name string) int {
	n := 0
	for line := range strings.Lines(log) {
		if !strings.Contains(line, `"namespace": "`+ns+`"`) || !strings.Contains(line, `"name": "`+name+`"`) {
			continue
		}
		if slices.ContainsFunc([]string{"install", "reinstall", "upgrade"}, func(st string) bool {
			return strings.Contains(line, `"step": "`+st+`"`)
		}) {
			n++
		}
	}
	return n
}

// Attack 6: caches hold what merely carries rudder's labels. 60 ConfigMaps
// of 400 KB labeled rudder.dev/release in a watched namespace raise the
// resident memory of the manager (VmRSS of its process) by less than 10
// MiB. Each mode has an operator of its own, so that the memory is this
// test's alone.
func TestTenancy_CacheMemory(t *testing.T) {
	t.Parallel() // its own operators over its own namespaces
	const (
		count  = 60
		size   = 400 << 10
		limit  = 10 << 20
		settle = 30 * time.Second
		label  = "rudder.dev/release"
	)
	for _, m := range []tenancyMode{{name: "self"}, {name: "lockdown", lockdown: true}} {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			a, b := tenancyNamespaces(m, "memory")
			op := tenancyOperator(t, m, []string{a, b})
			tn := newTenancy(t, m, op, "memory")
			// A Network of the tenant's: the caches of rendered ConfigMaps run.
			tn.tenantCreates(map[string]any{
				"apiVersion": "samplecrd.k8s.io/v1", "kind": "Network",
				"metadata": map[string]any{"name": "mem", "namespace": a},
				"spec":     map[string]any{"cidr": "10.40.0.0/24", "gateway": "10.40.0.1"},
			})
			waitNetworkReady(t, a, "mem")
			time.Sleep(10 * time.Second) // past the start's allocations
			before, err := residentMemory(op.cur.pid())
			if err != nil {
				t.Fatal(err)
			}

			body := make([]byte, size*3/4)
			if _, err := rand.Read(body); err != nil {
				t.Fatal(err)
			}
			data := base64.StdEncoding.EncodeToString(body)
			items := make([]any, count)
			for i := range items {
				items[i] = map[string]any{
					"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": fmt.Sprintf("ballast-%02d", i), "namespace": b,
						"labels": map[string]string{label: "x"}},
					"data": map[string]string{"ballast": data},
				}
			}
			for i := 0; i < count; i += 10 { // requests of 4 MB
				kubectl(t, "create", "-f", writeManifest(t, map[string]any{"apiVersion": "v1", "kind": "List", "items": items[i : i+10]}))
			}
			t.Logf("created %d ConfigMaps of %d KiB labeled %s=x in %s; manager RSS before: %s", count, size>>10, label, b, mib(before))

			var samples []string
			var after, peak int64
			for end := time.Now().Add(settle); time.Now().Before(end); time.Sleep(2 * time.Second) {
				if after, err = residentMemory(op.cur.pid()); err != nil {
					t.Fatal(err)
				}
				peak = max(peak, after)
				samples = append(samples, mib(after))
			}
			t.Logf("manager RSS every 2 s over %s: %s", settle, strings.Join(samples, ", "))
			if grew := after - before; grew >= limit {
				t.Errorf("the manager's resident memory grew by %s (%s to %s, peak %s) with %d ConfigMaps of %d KiB labeled %s in %s; want less than %s",
					mib(grew), mib(before), mib(after), mib(peak), count, size>>10, label, b, mib(limit))
			}
		})
	}
}

// webAppObject is the tenant's WebApp ns/name (nginx:1.21, one replica)
// with annotations.
func webAppObject(ns, name string, annotations map[string]string) map[string]any {
	meta := map[string]any{"name": name, "namespace": ns}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	return map[string]any{
		"apiVersion": "webapp.my.domain/v1", "kind": "WebApp", "metadata": meta,
		"spec": map[string]any{"image": "nginx:1.21", "replicas": 1, "port": 80},
	}
}

// randomWord is a word no one else knows.
func randomWord(t *testing.T) string {
	t.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", b)
}
