//go:build e2e

package e2e

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Issue 14, ordering: a WebApp annotated rudder.dev/depends-on:
// database/dep-db waits, uninstalled and saying so, until that Database
// exists and is Ready; then it is installed. A dependency back from the
// Database makes a cycle, which holds the next upgrade of either with a
// condition naming the cycle, until the annotation goes.
func TestDependsOn_WebAppWaitsForItsDatabase(t *testing.T) {
	t.Parallel() // its own namespace
	const ns = "depends"
	createNamespace(t, ns)
	app := newApp(t, ns, "dep-web")
	apply(t, `apiVersion: webapp.my.domain/v1
kind: WebApp
metadata:
  name: dep-web
  namespace: depends
  annotations:
    rudder.dev/depends-on: database/dep-db
spec: {image: "nginx:1.21", replicas: 1, port: 80}
`)
	app.waitCondition("Released", metav1.ConditionUnknown, "DependencyNotReady",
		"Waiting for Database dep-db to exist before the install", "rudder.dev/depends-on")
	if wa := app.mustGet(); wa.Status.Phase != "Pending" {
		t.Errorf("WebApp %s/%s phase %q while it waits, want Pending", ns, app.name, wa.Status.Phase)
	}
	if _, err := app.history(); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("WebApp %s/%s has a release while it waits (helm history: %v)", ns, app.name, err)
	}

	db := &nsDatabase{t: t, ns: ns, name: "dep-db"}
	db.create(map[string]any{"version": "16", "storageSize": "1Gi", "database": "orders"})
	db.waitReady(metav1.ConditionTrue, "Ready")
	app.waitServing(1, "nginx:1.21", 1)

	// A cycle: the Database now depends on the WebApp. Each is deployed, so
	// nothing waits until a change is due; the next upgrade of the WebApp is
	// held, with the cycle named.
	kubectl(t, "annotate", "database", db.name, "-n", ns, "rudder.dev/depends-on=webapp/dep-web")
	app.patch(`{"spec":{"image":"nginx:1.22"}}`)
	app.waitCondition("Released", metav1.ConditionFalse, "DependencyCycle",
		"webapp/dep-web → database/dep-db → webapp/dep-web", "remove one of these dependencies")
	app.checkSteady(1)
	kubectl(t, "annotate", "database", db.name, "-n", ns, "rudder.dev/depends-on-")
	app.waitServing(2, "nginx:1.22", 1)
	waitConditionOf(t, "database", ns, db.name, "Released", metav1.ConditionTrue, "InstallSucceeded")
}
