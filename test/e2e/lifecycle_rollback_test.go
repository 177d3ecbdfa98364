//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLifecycle_RollbackHoldsAcrossRestarts: a WebApp with four revisions is
// rolled back to revision 2 with the annotation rudder.dev/rollback-to; the
// release stays there, without a new revision, across a SIGTERM and a SIGKILL
// of the manager; Released says how to leave the hold; removing the
// annotation deploys the spec again. Then the command line: `rudder history`
// lists the revisions and `rudder rollback --to 1` rolls back.
func TestLifecycle_RollbackHoldsAcrossRestarts(t *testing.T) {
	t.Parallel() // its own operator over its own namespace
	op := privateOperator(t, "lc-rollback")
	a := newApp(t, "lc-rollback", "lc-rollback")
	images := []string{"", "nginx:1.21", "nginx:1.22", "nginx:1.23", "nginx:1.24"}
	a.create(map[string]any{"image": images[1], "replicas": 1, "port": 80})
	wa := a.waitServing(1, images[1], 1)
	uid := string(wa.Metadata.UID)
	for rev := 2; rev <= 4; rev++ {
		a.patch(fmt.Sprintf(`{"spec":{"image":%q}}`, images[rev]))
		a.waitServing(rev, images[rev], 1)
	}

	a.annotate("rudder.dev/rollback-to=2")
	a.waitServing(5, images[2], 1)
	a.checkHistory(a.mustHistory(), 5, map[int]string{5: "Rollback to 2"})
	a.waitEvent(uid, "RolledBack", "Rolled back release "+a.release()+" to revision 2 as revision 5")
	holdNotes := []string{"Rolled back to revision 2 (now revision 5)", "rudder.dev/rollback-to",
		"until the spec changes or the annotation is removed"}
	a.waitCondition("Released", metav1.ConditionTrue, "RolledBack", holdNotes...)

	for _, how := range []string{"SIGTERM", "SIGKILL"} {
		op.restart(t, how)
		a.poke() // the new manager reconciles the WebApp now, not only on its initial list
		a.holdsSteady(20*time.Second, 5, images[2])
		if _, err := a.serving(5, images[2], 1); err != nil {
			t.Fatalf("after %s and a restart: expected revision 2's values still served as revision 5: %v", how, err)
		}
		if err := checkCondition(a.mustGet(), "Released", metav1.ConditionTrue, "RolledBack", holdNotes...); err != nil {
			t.Errorf("after %s and a restart: %v", how, err)
		}
		if !strings.Contains(op.cur.tail(1<<20), "lc-rollback") {
			t.Errorf("after %s and a restart: expected the new manager's log %s to mention WebApp lc-rollback (it reconciled it), saw no line", how, op.cur.logPath)
		}
	}

	// Leaving the hold: without the annotation, the spec (revision 4's image) is deployed again.
	a.annotate("rudder.dev/rollback-to-")
	a.waitServing(6, images[4], 1)
	a.waitCondition("Released", metav1.ConditionTrue, "UpgradeSucceeded", "Revision 6 is deployed")

	// The command line, against the real cluster.
	out, err := run("rudder", "history", "webapp/"+a.name, "-n", a.ns)
	if err != nil {
		t.Fatal(err)
	}
	checkCLIHistory(t, out, 6, map[int]string{5: "Rollback to 2", 6: "deployed"})
	// The same as the kubectl plugin, with kubectl's flags, as data.
	out, err = run("kubectl", "rudder", "history", "webapp", a.name, "--namespace="+a.ns, "--request-timeout", "30s", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var revs []struct {
		Revision    int
		Status      string
		Description string
	}
	if err := json.Unmarshal([]byte(out), &revs); err != nil || len(revs) != 6 || revs[0].Revision != 6 || revs[0].Status != "deployed" ||
		revs[1].Description != "Rollback to 2" {
		t.Errorf("kubectl rudder history -o json: expected revisions 6 (deployed) down to 1, 5 a rollback to 2; saw %v (%v):\n%s", revs, err, out)
	}

	out, err = run("rudder", "rollback", "webapp/"+a.name, "--to", "1", "-n", a.ns, "--wait", "2m")
	if err != nil {
		t.Fatal(err)
	}
	// --wait returns once Released says RolledBack: "Rolled back to revision 1
	// as revision 7; checking its objects", or the settled "(now revision 7)".
	if !strings.Contains(out, "rollback to revision 1 requested") || !strings.Contains(out, "Rolled back to revision 1 ") ||
		!strings.Contains(out, "revision 7") {
		t.Errorf("rudder rollback --to 1 --wait: expected it to say the rollback was requested and made as revision 7, saw:\n%s", out)
	}
	a.waitServing(7, images[1], 1)
	a.checkHistory(a.mustHistory(), 7, map[int]string{5: "Rollback to 2", 7: "Rollback to 1"})
	if got := a.mustGet().Metadata.Annotations["rudder.dev/rollback-to"]; got != "1" {
		t.Errorf("after rudder rollback --to 1: expected annotation rudder.dev/rollback-to=1, saw %q", got)
	}
}

// checkCLIHistory checks `rudder history` output: a header and revisions n
// down to 1, newest first; each row of rows contains the given text.
func checkCLIHistory(t *testing.T, out string, n int, rows map[int]string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != n+1 || !strings.HasPrefix(lines[0], "REVISION") {
		t.Fatalf("rudder history: expected a header and %d revisions, saw:\n%s", n, out)
	}
	for i, l := range lines[1:] {
		if f := strings.Fields(l); len(f) == 0 || f[0] != fmt.Sprint(n-i) {
			t.Errorf("rudder history: expected row %d to be revision %d (newest first), saw %q", i+1, n-i, l)
		}
	}
	for rev, text := range rows {
		if l := lines[1+n-rev]; !strings.Contains(l, text) {
			t.Errorf("rudder history: expected revision %d's row to mention %q, saw %q", rev, text, l)
		}
	}
}

// TestLifecycle_OutOfBandHelmDetected: a `helm rollback` and a `helm upgrade
// --reuse-values --set image=…` run by hand against a WebApp's release are
// noticed (an OutOfBand event, the OutOfBand condition) and, with the default
// policy outOfBand: revert, undone by a new revision with the spec's values.
// Both CLIs do it as users run them: Helm 4 (bin/helm), which rudder is built
// on, with --force-conflicts, and the last Helm 3 (bin/helm3).
func TestLifecycle_OutOfBandHelmDetected(t *testing.T) {
	t.Parallel() // own namespaces; never restarts the manager or the cluster
	for _, cli := range []struct{ tool, ns string }{{"helm", "lc-oob"}, {"helm3", "lc-oob-helm3"}} {
		t.Run(cli.tool, func(t *testing.T) {
			t.Parallel()
			outOfBandHelm(t, cli.tool, cli.ns)
		})
	}
}

// outOfBandHelm runs TestLifecycle_OutOfBandHelmDetected's steps with the
// helm CLI tool in namespace ns.
func outOfBandHelm(t *testing.T, tool, ns string) {
	createNamespace(t, ns)
	a := newApp(t, ns, ns)
	a.cli = tool // its history and values are read with the same CLI
	spec := map[string]any{"image": "nginx:1.22", "replicas": 1, "port": 80}
	a.create(map[string]any{"image": "nginx:1.21", "replicas": 1, "port": 80})
	wa := a.waitServing(1, "nginx:1.21", 1)
	uid := string(wa.Metadata.UID)
	a.patch(`{"spec":{"image":"nginx:1.22"}}`)
	a.waitServing(2, "nginx:1.22", 1)

	steps := []struct {
		what string
		helm []string
	}{
		{"helm rollback", []string{"rollback", a.release(), "1", "-n", a.ns}},
		{"helm upgrade --reuse-values", []string{"upgrade", a.release(), "charts/webapp", "-n", a.ns, "--reuse-values", "--set", "image=nginx:1.99"}},
	}
	for i, s := range steps {
		if tool == "helm" {
			// Helm 4 applies server-side and takes no field another
			// manager (rudder's Helm writes) owns unless told to.
			s.helm = append(s.helm, "--force-conflicts")
		}
		hand, ours := 3+2*i, 4+2*i // the revision written by hand, rudder's that replaces it
		t.Logf("$ %s %s", tool, strings.Join(s.helm, " "))
		if _, err := run(tool, s.helm...); err != nil {
			t.Fatal(err)
		}
		written := fmt.Sprintf("Revision %d was written by another Helm client", hand)
		a.waitEvent(uid, "OutOfBand", written, "rudder upgrades the release back to the spec")
		a.waitServing(ours, "nginx:1.22", 1)
		a.waitCondition("OutOfBand", metav1.ConditionFalse, "Replaced", written, fmt.Sprintf("revision %d serves now", ours))
		if err := a.sameValues(spec); err != nil {
			t.Errorf("after %s was reverted: %v", s.what, err)
		}
		revs := a.mustHistory()
		a.checkHistory(revs, ours, nil)
		if revs[hand-1].Status != "superseded" {
			t.Errorf("after %s was reverted: expected revision %d superseded, saw %s", s.what, hand, toJSON(revs[hand-1]))
		}
	}
	a.holdsSteady(10*time.Second, 6, "nginx:1.22")
}
