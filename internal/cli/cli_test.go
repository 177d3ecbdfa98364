package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/rudder-operator/rudder/internal/manager"
	"github.com/rudder-operator/rudder/internal/shard"
	"github.com/rudder-operator/rudder/test/testenv"
)

var (
	cfg *rest.Config
	k8s client.Client
	// kubeconfig is a file whose context envtest reaches the API server as
	// an administrator, and whose current context, unreachable, reaches
	// nothing: the commands reach the API server only through kubectl's
	// flags, as a user's would.
	kubeconfig string
)

// TestMain runs the command line against a real API server and a real rudder
// manager (envtest, the embedded watches).
func TestMain(m *testing.M) {
	env, c, err := testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg = c
	code := func() int {
		if k8s, err = client.New(cfg, client.Options{Scheme: scheme.Scheme}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		dir, err := os.MkdirTemp("", "rudder-cli-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer func() { _ = os.RemoveAll(dir) }()
		if kubeconfig, err = writeKubeconfig(dir, cfg); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		log := zap.New(zap.WriteTo(os.Stderr), zap.Level(zapLevelQuiet))
		ctrl.SetLogger(log)
		mgr, err := manager.New(manager.Options{Config: cfg, MetricsAddr: "0", ProbeAddr: "0"}, log)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return testenv.RunWithManager(m, mgr)
	}()
	_ = env.Stop()
	os.Exit(code)
}

func TestRun_HistoryAndRollback(t *testing.T) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cli-"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	app := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"image": "nginx:1.25", "port": int64(80), "replicas": int64(1)}}}
	app.SetAPIVersion("webapp.my.domain/v1")
	app.SetKind("WebApp")
	app.SetNamespace(ns.Name)
	app.SetName("shop")
	if err := k8s.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	history := func() string {
		out, err := run(ctx, "history", "webapp/shop", "-n", ns.Name)
		if err != nil {
			return err.Error()
		}
		return out
	}
	waitFor(t, "revision 1", func() bool { return strings.Contains(history(), "Install complete") })
	for _, replicas := range []int{2, 3} {
		patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
		if err := k8s.Patch(ctx, app, client.RawPatch("application/merge-patch+json", patch)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, fmt.Sprintf("revision %d deployed", replicas), func() bool {
			for _, line := range strings.Split(history(), "\n") {
				if strings.HasPrefix(line, fmt.Sprintf("%d ", replicas)) && strings.Contains(line, "deployed") {
					return true
				}
			}
			return false
		})
	}
	h := history()
	if lines := strings.Split(strings.TrimSpace(h), "\n"); len(lines) != 4 || !strings.HasPrefix(lines[0], "REVISION") ||
		!strings.HasPrefix(lines[1], "3 ") || !strings.Contains(lines[1], "deployed") {
		t.Fatalf("history (%d lines):\n%q", len(strings.Split(strings.TrimSpace(h), "\n")), h)
	}

	out, err := run(ctx, "rollback", "webapps/shop", "-n", ns.Name, "--wait", "1m")
	if err != nil {
		t.Fatalf("rollback: %v\n%s", err, out)
	}
	if !strings.Contains(out, "Rolled back to revision 2") {
		t.Errorf("rollback said:\n%s", out)
	}
	if h := history(); !strings.Contains(h, "Rollback to 2") {
		t.Errorf("history after the rollback:\n%s", h)
	}

	// A second rollback while held on the first waits for its own revision,
	// not the first one's status.
	// The resource as kubectl's two arguments, kind and name.
	out, err = run(ctx, "rollback", "webapps", "shop", "--to", "1", "-n", ns.Name, "--wait", "1m")
	if err != nil {
		t.Fatalf("second rollback: %v\n%s", err, out)
	}
	if !strings.Contains(out, "Rolled back to revision 1") || !strings.Contains(history(), "Rollback to 1") {
		t.Errorf("second rollback said:\n%s\nhistory:\n%s", out, history())
	}

	// A reconcile asked for runs, and says so; no revision comes of it.
	out, err = run(ctx, "reconcile", "webapp/shop", "-n", ns.Name, "--wait", "1m")
	if err != nil {
		t.Fatalf("reconcile: %v\n%s", err, out)
	}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
		t.Fatal(err)
	}
	token := app.GetAnnotations()["rudder.dev/reconcile-requested-at"]
	if handled, _, _ := unstructured.NestedString(app.Object, "status", "lastHandledReconcileAt"); token == "" || handled != token ||
		!strings.Contains(out, "reconcile requested") || !strings.Contains(out, "reconciled; phase") {
		t.Errorf("reconcile said:\n%s\nannotation %q, status.lastHandledReconcileAt %q", out, token, handled)
	}
	if h := history(); strings.Contains(h, "\n6 ") {
		t.Errorf("the reconcile made a revision:\n%s", h)
	}

	errs := []struct {
		args []string
		want string
	}{
		{[]string{"history", "webapp", "-n", ns.Name}, "want <kind>/<name>"},
		{[]string{"history", "gizmo/shop", "-n", ns.Name}, `kind "gizmo"`},
		{[]string{"rollback", "webapp/shop", "--to", "99", "-n", ns.Name}, "revision 99 is not in the release's history"},
		{[]string{"launch", "webapp/shop"}, `unknown command "launch"`},
		{[]string{"rollback", "webapp/shop", "--wait", "-1s", "-n", ns.Name}, "flag --wait"},
		{[]string{"history", "webapp/shop", "-n", ns.Name, "--as", "system:serviceaccount:" + ns.Name + ":nobody"},
			`"system:serviceaccount:` + ns.Name + `:nobody" cannot get resource "webapps"`},
	}
	for _, e := range errs {
		_, err := run(ctx, e.args...)
		if err == nil || !strings.Contains(err.Error(), e.want) {
			t.Errorf("rudder %v: error %v, want one containing %q", e.args, err, e.want)
		}
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestRun_ShardOf(t *testing.T) {
	out, err := run(context.Background(), "shard-of", "--shards", "2", "payments", "orders")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			rows[f[0]] = f[1]
		}
	}
	for _, ns := range []string{"payments", "orders"} {
		if want := fmt.Sprint(shard.Of(ns, 2).Index); rows[ns] != want {
			t.Errorf("namespace %s: shard %q, want %s; output %q", ns, rows[ns], want, out)
		}
	}
	if !strings.Contains(out, "# shard 1") {
		t.Errorf("output %q lacks the count of shard 1", out)
	}
	if _, err := run(context.Background(), "shard-of", "payments"); err == nil || !strings.Contains(err.Error(), "--shards") {
		t.Errorf("without --shards: error %v, want one naming --shards", err)
	}
}
