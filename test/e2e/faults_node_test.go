//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Issue 11, node fault: the node under a WebApp and a Database stops
// heartbeating, as when its kubelet dies. The node-lifecycle controller turns
// it Ready=Unknown and marks its pods not ready; both resources then say they
// are not ready and name the workload holding them back. Past the pods'
// toleration the pods are evicted, and their replacements wait, pinned to the
// node, until it is back; then both resources are Ready again. The outage
// makes no revision: rudder reports it, it does not "repair" it.
//
// The node is the test's own kwok node, tainted so that only the test's pods
// (which tolerate the taint and select the node) run there: no other test's
// pods are touched, and the test can run in parallel with others.
// Its heartbeat is its Lease in kube-node-lease, renewed by kwok every 5 s:
// the test takes the Lease over (another holder, a renewal now and a long
// duration) so that kwok, which never breaks a held Lease, stops renewing it;
// giving it back is making that hold expire.
func TestFaults_NodeOutage(t *testing.T) {
	t.Parallel() // own namespace; never restarts the manager or the cluster
	node := "rudder-e2e-outage"
	createKwokNode(t, node)
	ns := "faults-node"
	createNamespace(t, ns)
	pin := map[string]any{"kubernetes.io/hostname": node}
	tolerate := []any{map[string]any{"key": outageTaint, "operator": "Exists", "effect": "NoSchedule"}}

	app := newApp(t, ns, "outage")
	app.create(map[string]any{"image": "nginx:1.21", "replicas": 2, "port": 80, "nodeSelector": pin, "tolerations": tolerate})
	db := &nsDatabase{t: t, ns: ns, name: "outage-db"}
	db.create(map[string]any{"version": "16", "storageSize": "1Gi", "database": "orders", "nodeSelector": pin, "tolerations": tolerate})
	app.waitServing(1, "nginx:1.21", 2)
	db.waitReady(metav1.ConditionTrue, "Ready")
	appRevs, dbRevs := len(app.mustHistory()), len(db.mustHistory())
	pods := podsOn(t, ns, node)
	if len(pods) != 3 {
		t.Fatalf("%d pods on node %s, want 3 (2 of the WebApp, 1 of the Database): %v", len(pods), node, pods)
	}

	stopHeartbeat(t, node)
	describeNodeOnFailure(t, ns, node) // before the cleanup of stopHeartbeat
	eventuallyWithin(t, 3*time.Minute, "node "+node+" Ready=Unknown", func() error { return nodeReadyIs(node, corev1.ConditionUnknown) })
	app.waitCondition("Ready", metav1.ConditionFalse, "Progressing", "Deployment/outage is not ready")
	db.waitReady(metav1.ConditionFalse, "Progressing", "StatefulSet/outage-db is not ready")

	// Evicted after their toleration: the pods are terminating and their
	// replacements cannot be scheduled on the unreachable node.
	eventuallyWithin(t, 3*time.Minute, "the pods on "+node+" evicted", func() error { return podsEvicted(ns, pods) })
	app.checkSteady(appRevs)
	db.checkSteady(dbRevs)

	startHeartbeat(t, node)
	eventuallyWithin(t, 3*time.Minute, "node "+node+" Ready again", func() error { return nodeReadyIs(node, corev1.ConditionTrue) })
	app.waitCondition("Ready", metav1.ConditionTrue, "Ready")
	db.waitReady(metav1.ConditionTrue, "Ready")
	if wa := app.mustGet(); wa.Status.ReadyReplicas != 2 {
		t.Errorf("WebApp %s/%s: readyReplicas %d after the outage, want 2", ns, app.name, wa.Status.ReadyReplicas)
	}
	app.checkSteady(appRevs)
	db.checkSteady(dbRevs)
}

// outageTaint keeps every pod but the node test's off its node.
const outageTaint = "rudder.dev/e2e-outage"

// createKwokNode adds a fake node that kwok runs (Ready within seconds),
// tainted outageTaint, and deletes it when the test ends, after the test's
// namespaces are gone.
func createKwokNode(t *testing.T, name string) {
	t.Helper()
	deleteNode := func() {
		_, _ = run("kubectl", "delete", "node", name, "--ignore-not-found", "--wait=true", "--timeout=1m")
	}
	deleteNode()
	t.Cleanup(deleteNode)
	apply(t, fmt.Sprintf(`apiVersion: v1
kind: Node
metadata:
  name: %[1]s
  annotations:
    kwok.x-k8s.io/node: fake
  labels:
    type: kwok
    kubernetes.io/hostname: %[1]s
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
spec:
  taints:
  - {key: %[2]s, value: "true", effect: NoSchedule}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "20", ephemeral-storage: 100Gi}
  allocatable: {cpu: "8", memory: 32Gi, pods: "20", ephemeral-storage: 100Gi}
`, name, outageTaint))
	eventually(t, "node "+name+" Ready", func() error { return nodeReadyIs(name, corev1.ConditionTrue) })
	eventually(t, "node "+name+"'s Lease held by kwok", func() error {
		l, err := nodeLease(name)
		if err != nil {
			return err
		}
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == outageHolder {
			return fmt.Errorf("lease holder %v", l.Spec.HolderIdentity)
		}
		return nil
	})
}

// outageHolder is the holder the test puts on a node's Lease to stop kwok
// renewing it.
const outageHolder = "rudder-e2e-outage"

// stopHeartbeat takes node's Lease from kwok for an hour, renewed once now:
// the node's last heartbeat. Until startHeartbeat, as at the end of the test.
func stopHeartbeat(t *testing.T, node string) {
	t.Helper()
	patchLease(t, node, outageHolder, time.Now(), 3600)
	t.Cleanup(func() { startHeartbeat(t, node) })
	t.Logf("node %s: heartbeat stopped", node)
}

// startHeartbeat lets the test's hold on node's Lease expire, so kwok takes
// it back and renews it.
func startHeartbeat(t *testing.T, node string) {
	t.Helper()
	l, err := nodeLease(node)
	if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != outageHolder {
		return
	}
	patchLease(t, node, outageHolder, time.Now().Add(-2*time.Hour), 3600)
	t.Logf("node %s: heartbeat back", node)
}

func patchLease(t *testing.T, node, holder string, renewed time.Time, seconds int32) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"spec": coordinationv1.LeaseSpec{
		HolderIdentity:       &holder,
		RenewTime:            &metav1.MicroTime{Time: renewed},
		LeaseDurationSeconds: &seconds,
	}})
	if err != nil {
		t.Fatal(err)
	}
	kubectl(t, "patch", "lease", node, "-n", corev1.NamespaceNodeLease, "--type", "merge", "-p", string(patch))
}

func nodeLease(node string) (*coordinationv1.Lease, error) {
	var l coordinationv1.Lease
	found, err := getJSON(&l, "lease", node, "-n", corev1.NamespaceNodeLease)
	if err == nil && !found {
		err = fmt.Errorf("expected the Lease of node %s, saw NotFound", node)
	}
	return &l, err
}

// nodeReadyIs says how node's Ready condition differs from status.
func nodeReadyIs(node string, status corev1.ConditionStatus) error {
	var n corev1.Node
	found, err := getJSON(&n, "node", node)
	if err != nil {
		return fmt.Errorf("node %s: %w", node, err)
	}
	if !found {
		return fmt.Errorf("expected node %s, saw NotFound", node)
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status != status {
				return fmt.Errorf("node %s Ready=%s (%s), want %s", node, c.Status, c.Message, status)
			}
			return nil
		}
	}
	return fmt.Errorf("node %s has no Ready condition", node)
}

// podsOn returns the names and uids of the pods of namespace ns on node.
func podsOn(t *testing.T, ns, node string) map[string]string {
	t.Helper()
	var pods corev1.PodList
	mustGetJSON(t, &pods, "pods", "-n", ns, "--field-selector", "spec.nodeName="+node)
	uids := map[string]string{}
	for _, p := range pods.Items {
		uids[p.Name] = string(p.UID)
	}
	return uids
}

// podsEvicted says whether each of pods (name to uid) in namespace ns is
// terminating or gone: the taint manager evicted it.
func podsEvicted(ns string, pods map[string]string) error {
	var list corev1.PodList
	if _, err := getJSON(&list, "pods", "-n", ns); err != nil {
		return err
	}
	running := []string{}
	for _, p := range list.Items {
		if pods[p.Name] == string(p.UID) && p.DeletionTimestamp == nil {
			running = append(running, p.Name)
		}
	}
	if len(running) > 0 {
		return fmt.Errorf("%d of the %d pods not evicted: %s", len(running), len(pods), strings.Join(running, ", "))
	}
	return nil
}

// describeNodeOnFailure logs, if t fails, what the node-lifecycle and
// taint-eviction controllers decide on: every node's Ready condition and
// taints, and the pods of namespace ns with their node, phase, deletion,
// readiness, the scheduler's word and tolerations.
func describeNodeOnFailure(t *testing.T, ns, node string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		out, _, err := runFull("kubectl", "get", "nodes", "-o",
			`custom-columns=NAME:.metadata.name,READY:.status.conditions[?(@.type=="Ready")].status,SINCE:.status.conditions[?(@.type=="Ready")].lastTransitionTime,TAINTS:.spec.taints`)
		t.Logf("while node %s was out (err %v):\n%s", node, err, out)
		out, _, err = runFull("kubectl", "get", "pods", "-n", ns, "-o",
			`custom-columns=NAME:.metadata.name,NODE:.spec.nodeName,PHASE:.status.phase,DELETED:.metadata.deletionTimestamp,READY:.status.conditions[?(@.type=="Ready")].status,SCHEDULED:.status.conditions[?(@.type=="PodScheduled")].message,TOLERATIONS:.spec.tolerations`)
		t.Logf("pods of %s (err %v):\n%s", ns, err, out)
		out, _, err = runFull("kubectl", "get", "lease", node, "-n", corev1.NamespaceNodeLease, "-o", "jsonpath={.spec}")
		t.Logf("Lease of node %s (err %v): %s", node, err, out)
	})
}

// checkSteady fails the test unless the WebApp's release still has n
// revisions, none pending: nothing was released because of the outage.
func (a *lcApp) checkSteady(n int) {
	a.t.Helper()
	checkRevisions(a.t, "WebApp "+a.ns+"/"+a.name, a.mustHistory(), n)
}

func checkRevisions(t *testing.T, what string, revs []helmRevision, n int) {
	t.Helper()
	if len(revs) != n {
		t.Errorf("%s: %d revisions, want %d: %s", what, len(revs), n, toJSON(revs))
	}
	for _, r := range revs {
		if isPendingStatus(r.Status) {
			t.Errorf("%s: revision %d is %s", what, r.Revision, r.Status)
		}
	}
}
