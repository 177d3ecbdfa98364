//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// lastHelm3Commit is the last commit of rudder built on Helm 3
// (helm.sh/helm/v3 v3.21.4): the releases it wrote are what an existing
// installation has when it upgrades to the Helm 4 build.
const lastHelm3Commit = "52143d831bca1cb7873382aa48479e1500c18f78"

// TestHelm3Releases_CarryOn: releases written by rudder on Helm 3 continue
// under the Helm 4 build. The test builds lastHelm3Commit's manager from the
// repository's history, lets it install a WebApp and upgrade it once, stops
// it and starts the Helm 4 build over the same namespace, both serving that
// commit's watches.yaml and charts from disk (a chart change is an upgrade
// of its own, not what this test is about). Then:
//   - nothing changed: no new revision, and status.history as Helm 3's build
//     left it (its revisions verify as signed for the WebApp: an unsigned
//     one would be taken for another Helm client's and replaced);
//   - a spec change is an upgrade, by server-side apply: the Deployment is
//     the same object, and the fields Helm 3's client-side writes owned move
//     to one apply entry of the same manager, with no field owned twice;
//   - rudder.dev/rollback-to a revision Helm 3 wrote holds;
//   - deleting the WebApp uninstalls the release, storage and all.
func TestHelm3Releases_CarryOn(t *testing.T) {
	// Not parallel, though it has its own operators and namespace: its build
	// of the Helm 3 manager takes both cores for minutes on a cold build
	// cache, which the parallel tests' waits should not share.
	const ns = "helm3-carry"
	helm3Manager, src := buildManagerAt(t, lastHelm3Commit)
	watchesFile := "--watches-file=" + filepath.Join(src, "watches.yaml")

	privateNamespaces.Store(ns, true)
	op := &operator{name: ns + "-helm3", env: []string{"WATCH_NAMESPACE=" + ns}, args: lockdownArgs([]string{watchesFile}), bin: helm3Manager}
	// Registered before the namespace's, so it runs after: a manager
	// uninstalls the releases while the namespace is deleted.
	t.Cleanup(func() {
		if op.cur == nil {
			return
		}
		select {
		case <-op.cur.exited:
		default:
			_ = op.cur.stop(shutdownTimeout)
		}
	})
	createNamespace(t, ns)
	if err := op.start(); err != nil {
		t.Fatalf("starting the Helm 3 build (%s): %v", lastHelm3Commit[:7], err)
	}
	op.logOnFailure(t)
	t.Cleanup(func() { op.ensureRunning(t) })

	a := newApp(t, ns, "carry")
	a.create(map[string]any{"image": "nginx:1.21", "replicas": 1, "port": 80})
	a.waitServing(1, "nginx:1.21", 1)
	a.patch(`{"spec":{"image":"nginx:1.22"}}`)
	a.waitServing(2, "nginx:1.22", 1)
	before := a.mustGet()
	dep := withManagedFields(t, ns, a.name)
	if !hasUpdateEntry(dep, "manager") {
		t.Fatalf("the Helm 3 build's Deployment has no client-side (Update) entry of manager %q: %s", "manager", toJSON(dep.ManagedFields))
	}

	// The Helm 4 build takes over.
	if err := op.cur.stop(shutdownTimeout); err != nil {
		t.Fatalf("stopping the Helm 3 build: %v", err)
	}
	op.bin = ""
	op.name = ns
	op.startAgain(t)

	// Nothing changed: no new revision, the same history.
	a.poke()
	a.holdsSteady(10*time.Second, 2, "nginx:1.22")
	after := a.mustGet()
	if !reflect.DeepEqual(historyOf(before), historyOf(after)) {
		t.Errorf("status.history changed when the Helm 4 build took over:\nbefore %s\nafter  %s", toJSON(before.Status.History), toJSON(after.Status.History))
	}
	a.waitCondition("Ready", metav1.ConditionTrue, "Ready")

	// A spec change: an upgrade, by server-side apply, of the same objects.
	a.patch(`{"spec":{"image":"nginx:1.23"}}`)
	a.waitServing(3, "nginx:1.23", 1)
	upgraded := withManagedFields(t, ns, a.name)
	if upgraded.UID != dep.UID {
		t.Errorf("the Deployment was recreated by the first Helm 4 upgrade: UID %s, was %s", upgraded.UID, dep.UID)
	}
	if hasUpdateEntry(upgraded, "manager") || !hasApplyEntry(upgraded, "manager") {
		t.Errorf("after the first Helm 4 upgrade: want manager's fields in one Apply entry and no Update entry; managed fields %s", toJSON(upgraded.ManagedFields))
	}
	if twice := ownedTwice(t, upgraded); len(twice) > 0 {
		t.Errorf("after the first Helm 4 upgrade: fields owned by two managers: %v", twice)
	}

	// A rollback to a revision Helm 3 wrote holds.
	a.annotate("rudder.dev/rollback-to=1")
	a.waitServing(4, "nginx:1.21", 1)
	a.waitCondition("Released", metav1.ConditionTrue, "RolledBack", "Rolled back to revision 1 (now revision 4)")
	a.holdsSteady(10*time.Second, 4, "nginx:1.21")
	a.annotate("rudder.dev/rollback-to-")
	a.waitServing(5, "nginx:1.23", 1)

	// Uninstall: the WebApp's deletion takes the release and its storage.
	kubectl(t, "delete", "webapp", a.name, "-n", ns, "--wait=true", "--timeout=2m")
	eventually(t, "release "+a.release()+" uninstalled, storage and all", func() error {
		out, err := run("kubectl", "get", "secrets", "-n", ns, "-l", "owner=helm,name="+a.release(), "-o", "name")
		if err != nil {
			return err
		}
		if strings.TrimSpace(out) != "" {
			return fmt.Errorf("storage Secrets left: %s", out)
		}
		found, err := getJSON(&appsv1.Deployment{}, "deployment", a.name, "-n", ns)
		if err != nil {
			return err
		}
		if found {
			return fmt.Errorf("Deployment %s/%s still there", ns, a.name)
		}
		return nil
	})
}

// buildManagerAt builds cmd/manager as it was at commit, from the
// repository's history (git archive), as the Makefile builds bin/manager,
// and returns the binary and the source tree it was built from.
func buildManagerAt(t *testing.T, commit string) (bin, src string) {
	t.Helper()
	dir := t.TempDir()
	// Named manager, as bin/manager and the image's are: Helm's field
	// manager is the binary's name, and the Helm 4 build takes over its fields.
	src, bin = filepath.Join(dir, "src"), filepath.Join(dir, commit[:7], "manager")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", root, "cat-file", "-e", commit+"^{commit}").CombinedOutput(); err != nil {
		t.Fatalf("this checkout's history lacks commit %s, the last rudder on Helm 3 (a shallow clone? fetch it with git fetch --unshallow): %v %s", commit, err, out)
	}
	if err := os.Mkdir(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	archive := exec.CommandContext(ctx, "sh", "-c", fmt.Sprintf("git -C %q archive %s | tar -x -C %q", root, commit, src))
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("extracting commit %s: %v\n%s", commit, err, out)
	}
	start := time.Now()
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./cmd/manager")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the manager of commit %s: %v\n%s", commit, err, out)
	}
	t.Logf("built the manager of commit %s (Helm 3) in %s", commit[:7], time.Since(start).Round(time.Second))
	return bin, src
}

// withManagedFields reads Deployment ns/name with its managed fields, which
// kubectl leaves out unless asked.
func withManagedFields(t *testing.T, ns, name string) *appsv1.Deployment {
	t.Helper()
	var dep appsv1.Deployment
	mustGetJSON(t, &dep, "deployment", name, "-n", ns, "--show-managed-fields")
	return &dep
}

// historyOf is a WebApp's status.history without its timestamps' formatting.
func historyOf(wa *webApp) string {
	b, _ := json.Marshal(wa.Status.History)
	return string(b)
}

// hasUpdateEntry reports whether manager owns fields of obj by client-side
// writes (operation Update); hasApplyEntry, by server-side apply.
func hasUpdateEntry(obj metav1.Object, manager string) bool {
	return hasEntry(obj, manager, metav1.ManagedFieldsOperationUpdate)
}

func hasApplyEntry(obj metav1.Object, manager string) bool {
	return hasEntry(obj, manager, metav1.ManagedFieldsOperationApply)
}

func hasEntry(obj metav1.Object, manager string, op metav1.ManagedFieldsOperationType) bool {
	for _, e := range obj.GetManagedFields() {
		if e.Manager == manager && e.Operation == op && e.Subresource == "" {
			return true
		}
	}
	return false
}

// ownedTwice returns the leaf fields of obj (not its status) that more than
// one entry of its managed fields owns.
func ownedTwice(t *testing.T, obj metav1.Object) []string {
	t.Helper()
	seen := map[string]string{}
	var twice []string
	for _, e := range obj.GetManagedFields() {
		if e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(strings.NewReader(e.FieldsV1.GetRawString())); err != nil {
			t.Fatalf("decoding the managed fields of %s: %v", e.Manager, err)
		}
		who := e.Manager + "/" + string(e.Operation)
		set.Leaves().Iterate(func(p fieldpath.Path) {
			key := p.String()
			if prev, ok := seen[key]; ok && prev != who {
				twice = append(twice, fmt.Sprintf("%s (%s and %s)", key, prev, who))
			}
			seen[key] = who
		})
	}
	return twice
}
