//go:build bench

// Package bench measures rudder on the local cluster: how fast a wave of
// WebApps becomes Running, and what it costs the manager in CPU and memory.
// `make bench` runs it and prints the figures; no figure is asserted.
package bench

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/rudder-operator/rudder/internal/testenv"
)

var webappList = schema.GroupVersionKind{Group: "webapp.my.domain", Version: "v1", Kind: "WebAppList"}

// BenchmarkWebApps creates RUDDER_BENCH_WEBAPPS WebApps (default 200) of one
// replica each in a fresh namespace and reports:
//   - ready-s: seconds from the first create until every WebApp is Running;
//   - cpu-s-to-ready: manager CPU seconds spent until then;
//   - cpu-s-idle-minute: manager CPU seconds in the minute after (steady state);
//   - rss-peak-MiB: the manager's peak resident memory;
//   - delete-s: seconds from deleting them all until every release is gone.
func BenchmarkWebApps(b *testing.B) {
	n := envInt("RUDDER_BENCH_WEBAPPS", 200)
	idle := time.Duration(envInt("RUDDER_BENCH_IDLE_SECONDS", 60)) * time.Second
	ctx := context.Background()
	cfg, err := config.GetConfig()
	if err != nil {
		b.Fatal(err)
	}
	k8s, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	installCRDs(b)
	mgr := startManager(b)

	for i := 0; i < b.N; i++ {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-"}}
		if err := k8s.Create(ctx, ns); err != nil {
			b.Fatal(err)
		}
		cpu0 := mgr.cpu(b)
		start := time.Now()
		for j := 0; j < n; j++ {
			if err := k8s.Create(ctx, webapp(ns.Name, fmt.Sprintf("app-%04d", j))); err != nil {
				b.Fatal(err)
			}
		}
		created := time.Since(start)
		waitFor(b, 30*time.Minute, func() (bool, string) {
			running := countRunning(b, k8s, ns.Name)
			return running == n, fmt.Sprintf("%d/%d Running", running, n)
		})
		ready := time.Since(start)
		cpuReady := mgr.cpu(b) - cpu0
		time.Sleep(idle)
		cpuIdle := (mgr.cpu(b) - cpu0 - cpuReady) * 60 / idle.Seconds()

		delStart := time.Now()
		if err := k8s.Delete(ctx, ns); err != nil {
			b.Fatal(err)
		}
		waitFor(b, 30*time.Minute, func() (bool, string) {
			err := k8s.Get(ctx, client.ObjectKeyFromObject(ns), &corev1.Namespace{})
			return err != nil, "namespace " + ns.Name + " still terminating"
		})
		deleted := time.Since(delStart)

		b.ReportMetric(ready.Seconds(), "ready-s")
		b.ReportMetric(cpuReady, "cpu-s-to-ready")
		b.ReportMetric(cpuIdle, "cpu-s-idle-minute")
		b.ReportMetric(mgr.rssPeakMiB(b), "rss-peak-MiB")
		b.ReportMetric(deleted.Seconds(), "delete-s")
		fmt.Printf("rudder bench: %d WebApps: created in %.1fs, all Running after %.1fs; manager CPU %.1fs until then, "+
			"%.1fs per idle minute after; peak RSS %.0f MiB; deleted in %.1fs\n",
			n, created.Seconds(), ready.Seconds(), cpuReady, cpuIdle, mgr.rssPeakMiB(b), deleted.Seconds())
	}
	mgr.stop(b)
}

// installCRDs applies rudder's CRDs with the repository's kubectl.
func installCRDs(b *testing.B) {
	root, err := testenv.Root()
	if err != nil {
		b.Fatal(err)
	}
	kubectl := filepath.Join(root, "bin", "kubectl")
	for _, args := range [][]string{
		{"apply", "-f", filepath.Join(root, "config", "crd", "bases")},
		{"wait", "--for=condition=Established", "--timeout=2m", "crd/webapps.webapp.my.domain"},
	} {
		if out, err := exec.Command(kubectl, args...).CombinedOutput(); err != nil {
			b.Fatalf("kubectl %v: %v\n%s", args, err, out)
		}
	}
}

func webapp(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"replicas": int64(1), "image": "nginx:1.25", "port": int64(80)},
	}}
	u.SetAPIVersion("webapp.my.domain/v1")
	u.SetKind("WebApp")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func countRunning(b *testing.B, k8s client.Client, ns string) int {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(webappList)
	if err := k8s.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	running := 0
	for _, u := range list.Items {
		if phase, _, _ := unstructured.NestedString(u.Object, "status", "phase"); phase == "Running" {
			running++
		}
	}
	return running
}

func waitFor(b *testing.B, timeout time.Duration, done func() (bool, string)) {
	b.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := done()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("timed out after %s: %s", timeout, state)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// manager is the rudder manager process under measurement.
type manager struct {
	cmd *exec.Cmd
	out bytes.Buffer
}

func startManager(b *testing.B) *manager {
	bin := os.Getenv("RUDDER_MANAGER_BIN")
	if bin == "" || os.Getenv("KUBECONFIG") == "" {
		b.Fatal("RUDDER_MANAGER_BIN and KUBECONFIG must be set: run `make bench`")
	}
	probe := freeAddr(b)
	m := &manager{}
	m.cmd = exec.Command(bin, "--metrics-bind-address=0", "--health-probe-bind-address="+probe, "--log-level=error")
	m.cmd.Stdout, m.cmd.Stderr = &m.out, &m.out
	if err := m.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	waitFor(b, 2*time.Minute, func() (bool, string) {
		resp, err := http.Get("http://" + probe + "/readyz") //nolint:gosec // loopback address chosen here
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return m
}

// cpu returns the CPU seconds (user + system) the manager has used.
func (m *manager) cpu(b *testing.B) float64 {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", m.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name, which is in parentheses: utime is the 14th, stime the 15th.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100 // USER_HZ
}

func (m *manager) rssPeakMiB(b *testing.B) float64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", m.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

func (m *manager) stop(b *testing.B) {
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	if err := m.cmd.Wait(); err != nil {
		b.Errorf("manager exited with %v; output:\n%s", err, m.out.String())
	}
}

func freeAddr(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
