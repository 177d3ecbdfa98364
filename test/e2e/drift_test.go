//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// driftWatches is the repository's watches.yaml with drift rules: WebApp
// ignores /spec/replicas of the Deployment drift-fixed; Network warns only.
const driftWatches = "test/e2e/testdata/watches-drift.yaml"

// Issue 14, drift policy and autoscaling. Two WebApps whose Deployments
// another writer scales every 3 s for a minute, as an autoscaler does: one
// whose chart sets replicas, under an ignore rule on /spec/replicas, and one
// with spec.autoscaling, whose chart leaves replicas to its
// HorizontalPodAutoscaler. rudder puts back neither the replicas nor makes a
// revision or an event about them, while an image edited by hand is still put
// back (keeping the writer's replicas). A Network of a kind in warn mode
// reports an edited ConfigMap in its Drifted condition and one event, and
// leaves it as edited.
func TestDrift_OtherWritersAreNotFought(t *testing.T) {
	t.Parallel() // its own operator over its own namespace
	const ns = "drift"
	op := privateOperator(t, ns, "--watches-file="+filepath.Join(root, driftWatches))
	fixed := newApp(t, ns, "drift-fixed")
	fixed.create(map[string]any{"image": "nginx:1.21", "replicas": 2, "port": 80})
	scaled := newApp(t, ns, "drift-scaled")
	scaled.create(map[string]any{"image": "nginx:1.21", "port": 80,
		"autoscaling": map[string]any{"enabled": true, "minReplicas": 1, "maxReplicas": 6},
		"resources":   map[string]any{"requests": map[string]any{"cpu": "100m"}}})
	fixed.waitServing(1, "nginx:1.21", 2)
	scaled.waitServing(1, "nginx:1.21", 1)
	var hpa autoscalingv2.HorizontalPodAutoscaler
	mustGetJSON(t, &hpa, "hpa", scaled.name, "-n", ns)
	if hpa.Spec.ScaleTargetRef.Name != scaled.name || hpa.Spec.MinReplicas == nil || *hpa.Spec.MinReplicas != 1 || hpa.Spec.MaxReplicas != 6 {
		t.Errorf("HorizontalPodAutoscaler %s/%s: %s, want Deployment %s scaled between 1 and 6", ns, scaled.name, toJSON(hpa.Spec), scaled.name)
	}
	fixedUID, scaledUID := string(fixed.mustGet().Metadata.UID), string(scaled.mustGet().Metadata.UID)
	logFrom := op.logSize(t)

	// The writer: replicas 3, 4, 5, 1, 2, ... every 3 s for a minute, each
	// write checked on the next round to have stayed.
	var n, writes int
	for i, start := 0, time.Now(); time.Since(start) < time.Minute; i++ {
		if i > 0 {
			checkReplicas(t, ns, n, fixed.name, scaled.name)
		}
		n = 1 + (i+2)%5
		kubectl(t, "scale", "deployment", fixed.name, scaled.name, "-n", ns, "--replicas="+strconv.Itoa(n))
		writes++
		time.Sleep(3 * time.Second)
	}
	checkReplicas(t, ns, n, fixed.name, scaled.name)
	fixed.checkSteady(1)
	scaled.checkSteady(1)
	noEvent(t, ns, fixedUID, "DriftRepaired")
	noEvent(t, ns, scaledUID, "DriftRepaired")
	if log := op.logSince(t, logFrom); strings.Contains(log, "Put back object") {
		t.Errorf("the manager put objects back while only replicas changed:\n%s", grepLines(log, "Put back object"))
	}
	t.Logf("%d writes of replicas to each Deployment in a minute: no repair, no event, no revision", writes)

	// An image edited by hand is put back; the writer's replicas stay.
	kubectl(t, "set", "image", "deployment/"+fixed.name, "webapp=evil:1", "-n", ns)
	fixed.waitEvent(fixedUID, "DriftRepaired", "Deployment/"+fixed.name)
	eventually(t, "the image put back", func() error {
		d, err := fixed.deployment()
		if err != nil {
			return err
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.21" {
			return fmt.Errorf("Deployment %s/%s runs %s", ns, fixed.name, img)
		}
		return nil
	})
	checkReplicas(t, ns, n, fixed.name)
	fixed.checkSteady(1)

	// warn: reported once, left as it is.
	const net = "drift-net"
	createNetwork(t, ns, net, "10.20.0.0/24", "10.20.0.1")
	waitNetworkReady(t, ns, net)
	kubectl(t, "patch", "configmap", net, "-n", ns, "--type", "merge", "-p", `{"data":{"gateway":"10.20.0.254"}}`)
	waitConditionOf(t, "network", ns, net, "Drifted", metav1.ConditionTrue, "Drifted", "ConfigMap/"+net, "driftDetection.mode is warn")
	for range 3 { // more reconciles with the edit in place: no more events
		reconcileNetwork(t, ns, net)
	}
	var cm corev1.ConfigMap
	mustGetJSON(t, &cm, "configmap", net, "-n", ns)
	if cm.Data["gateway"] != "10.20.0.254" {
		t.Errorf("ConfigMap %s/%s gateway %q: warn mode must leave the edit", ns, net, cm.Data["gateway"])
	}
	var network struct{ Metadata metav1.ObjectMeta }
	mustGetJSON(t, &network, "network", net, "-n", ns)
	if got := eventsWith(t, ns, string(network.Metadata.UID), "DriftDetected"); len(got) != 1 || got[0].Count > 1 {
		t.Errorf("DriftDetected events about Network %s/%s: %s, want one, once", ns, net, toJSON(got))
	}
	kubectl(t, "patch", "configmap", net, "-n", ns, "--type", "merge", "-p", `{"data":{"gateway":"10.20.0.1"}}`)
	waitConditionOf(t, "network", ns, net, "Drifted", metav1.ConditionFalse, "NoDrift")
}

// checkReplicas fails the test unless each named Deployment of ns asks for n
// replicas.
func checkReplicas(t *testing.T, ns string, n int, names ...string) {
	t.Helper()
	for _, name := range names {
		var d appsv1.Deployment
		mustGetJSON(t, &d, "deployment", name, "-n", ns)
		if d.Spec.Replicas == nil || int(*d.Spec.Replicas) != n {
			t.Errorf("Deployment %s/%s: replicas %v, want %d as the other writer set them", ns, name, d.Spec.Replicas, n)
		}
	}
}

// eventsWith returns the events of reason about the object uid in ns.
func eventsWith(t *testing.T, ns, uid, reason string) []corev1.Event {
	t.Helper()
	var list corev1.EventList
	mustGetJSON(t, &list, "events", "-n", ns, "--field-selector", "involvedObject.uid="+uid+",reason="+reason)
	return list.Items
}

func noEvent(t *testing.T, ns, uid, reason string) {
	t.Helper()
	if got := eventsWith(t, ns, uid, reason); len(got) > 0 {
		t.Errorf("%d %s events about %s: %s", len(got), reason, uid, toJSON(got))
	}
}

// reconcileNetwork asks for a reconcile of Network ns/name and waits until
// its status says one saw the request.
func reconcileNetwork(t *testing.T, ns, name string) {
	t.Helper()
	token := time.Now().UTC().Format(time.RFC3339Nano)
	kubectl(t, "annotate", "network", name, "-n", ns, "--overwrite", "rudder.dev/reconcile-requested-at="+token)
	eventually(t, "a reconcile of Network "+ns+"/"+name, func() error {
		var obj struct {
			Status struct {
				LastHandledReconcileAt string `json:"lastHandledReconcileAt"`
			} `json:"status"`
		}
		if _, err := getJSON(&obj, "network", name, "-n", ns); err != nil {
			return err
		}
		if obj.Status.LastHandledReconcileAt != token {
			return fmt.Errorf("status.lastHandledReconcileAt %q, want %q", obj.Status.LastHandledReconcileAt, token)
		}
		return nil
	})
}

// grepLines returns the lines of text that contain s.
func grepLines(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
