//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Issue 14, values from ConfigMaps and Secrets: a WebApp annotated
// rudder.dev/values-from takes its environment from a ConfigMap's
// values.yaml and a password from a Secret's key. While the Secret is missing
// the release waits, with a condition naming it; once it exists the release
// is installed; a change of either object upgrades it. What the Secret holds
// is in no status, event or log line.
func TestValuesFrom_ConfigMapAndSecret(t *testing.T) {
	t.Parallel() // its own namespace
	const ns = "values-from"
	createNamespace(t, ns)
	logged := shared.logSize(t)
	secretWord := fmt.Sprintf("s3cret-%d", logged)
	apply(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: vf-shared, namespace: values-from}
data:
  values.yaml: |
    config:
      MODE: shared
`)
	app := newApp(t, ns, "vf-app")
	apply(t, `apiVersion: webapp.my.domain/v1
kind: WebApp
metadata:
  name: vf-app
  namespace: values-from
  annotations:
    rudder.dev/values-from: |
      - kind: ConfigMap
        name: vf-shared
      - kind: Secret
        name: vf-db
        valuesKey: password
        targetPath: config.DB_PASSWORD
spec: {image: "nginx:1.21", replicas: 1, port: 80}
`)
	app.waitCondition("Released", metav1.ConditionFalse, "ValuesFromNotReady", "Secret vf-db has no key password", "mark the source optional")

	kubectl(t, "create", "secret", "generic", "vf-db", "-n", ns, "--from-literal=password="+secretWord)
	app.waitServing(1, "nginx:1.21", 1)
	checkEnv(t, app, map[string]string{"MODE": "shared", "DB_PASSWORD": secretWord})

	kubectl(t, "patch", "configmap", "vf-shared", "-n", ns, "--type", "merge", "-p", `{"data":{"values.yaml":"config:\n  MODE: changed\n"}}`)
	app.waitServing(2, "nginx:1.21", 1)
	checkEnv(t, app, map[string]string{"MODE": "changed", "DB_PASSWORD": secretWord})

	kubectl(t, "patch", "secret", "vf-db", "-n", ns, "--type", "merge", "-p", `{"stringData":{"password":"`+secretWord+`-2"}}`)
	app.waitServing(3, "nginx:1.21", 1)
	checkEnv(t, app, map[string]string{"MODE": "changed", "DB_PASSWORD": secretWord + "-2"})

	wa := app.mustGet()
	if s := toJSON(wa.Status); strings.Contains(s, secretWord) {
		t.Errorf("status shows what the Secret holds: %s", s)
	}
	if evs, err := app.events(string(wa.Metadata.UID)); err != nil || strings.Contains(toJSON(evs), secretWord) {
		t.Errorf("events show what the Secret holds (err %v): %s", err, toJSON(evs))
	}
	if log := shared.logSince(t, logged); strings.Contains(log, secretWord) {
		t.Errorf("the manager logged what the Secret holds:\n%s", grepLines(log, secretWord))
	}
}

// checkEnv fails the test unless the WebApp's container has each of env.
func checkEnv(t *testing.T, app *lcApp, env map[string]string) {
	t.Helper()
	d, err := app.deployment()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		got[e.Name] = e.Value
	}
	for k, v := range env {
		if got[k] != v {
			t.Errorf("Deployment %s/%s: env %s=%q, want %q", app.ns, app.name, k, got[k], v)
		}
	}
}
