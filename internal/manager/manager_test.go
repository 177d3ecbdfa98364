package manager_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/rudder-operator/rudder/internal/manager"
	"github.com/rudder-operator/rudder/test/testenv"
)

// TestManagerBinary_ServesProbesAndStopsOnSIGTERM runs the real manager
// binary against a real API server, as a user would.
func TestManagerBinary_ServesProbesAndStopsOnSIGTERM(t *testing.T) {
	env, _, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	kubeconfig := adminKubeconfig(t, env)
	bin := buildManager(t)

	probe, metrics := freeAddr(t), freeAddr(t)
	var out bytes.Buffer
	// Plain HTTP metrics, for local development; TestManagerBinary_AuthorizesMetrics
	// scrapes the default, HTTPS with the API server's authorization.
	cmd := exec.Command(bin, "--health-probe-bind-address="+probe, "--metrics-bind-address="+metrics, "--metrics-secure=false", "--log-format=console")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("manager output:\n%s", out.String())
		}
	})

	for _, path := range []string{"/healthz", "/readyz"} {
		waitHTTP(t, "http://"+probe+path, "ok", exited)
	}
	waitHTTP(t, "http://"+metrics+"/metrics", "controller_runtime_reconcile_total", exited)

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("manager exited with %v after SIGTERM, want a clean exit", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("manager still running 60s after SIGTERM")
	}
}

func TestNew_RefusesBadWatches(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		yaml  string
		wants []string // substrings of the error
	}{
		{
			name:  "unknown chart",
			yaml:  "- {group: a.example.com, version: v1, kind: Thing, chart: charts/nope}\n",
			wants: []string{"entry 1", "Kind=Thing", `"chart"`, "charts/nope"},
		},
		{
			name: "duplicate kind",
			yaml: "- {group: a.example.com, version: v1, kind: Thing, chart: c}\n" +
				"- {group: a.example.com, version: v2, kind: Thing, chart: c}\n",
			wants: []string{"entry 2", "Thing", "entry 1"},
		},
		{
			name:  "malformed selector",
			yaml:  "- {group: a.example.com, version: v1, kind: Thing, chart: c, selector: {matchExpressions: [{key: x, operator: Sometimes}]}}\n",
			wants: []string{"entry 1", `"selector"`},
		},
		{
			name:  "unknown hook",
			yaml:  "- {group: a.example.com, version: v1, kind: Thing, chart: c, hooks: [teleport]}\n",
			wants: []string{"Thing", `"hooks"`, "teleport"},
		},
		{
			name:  "malformed period",
			yaml:  "- {group: a.example.com, version: v1, kind: Thing, chart: c, reconcilePeriod: 5x}\n",
			wants: []string{"entry 1", `"reconcilePeriod"`, "5x"},
		},
	}
	writeChart(t, filepath.Join(dir, "c"))
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(dir, fmt.Sprintf("watches-%d.yaml", i))
			if err := os.WriteFile(file, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := manager.New(manager.Options{WatchesFile: file}, logr.Discard())
			if err == nil {
				t.Fatal("manager built from a bad watches file")
			}
			for _, w := range tt.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestRun_RefusesBadLogFlags(t *testing.T) {
	tests := []struct {
		name string
		opts manager.Options
		want string
	}{
		{name: "level", opts: manager.Options{LogLevel: "loud"}, want: "--log-level"},
		{name: "format", opts: manager.Options{LogFormat: "xml"}, want: "--log-format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := manager.Run(context.Background(), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run() error = %v, want one naming %s", err, tt.want)
			}
		})
	}
}

func writeChart(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte("apiVersion: v2\nname: c\nversion: 0.1.0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func adminKubeconfig(t *testing.T, env *envtest.Environment) string {
	t.Helper()
	user, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// built is the manager binary the package's tests run, built once: a link
// per test cost the unit phase a minute of both cores.
var built struct {
	once sync.Once
	bin  string
	err  error
}

// buildManager returns the manager binary, built from the repository once
// for the package's tests; it is removed when the process exits (TestMain).
func buildManager(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		root, err := testenv.Root()
		if err != nil {
			built.err = err
			return
		}
		dir, err := os.MkdirTemp("", "rudder-manager-test-")
		if err != nil {
			built.err = err
			return
		}
		built.bin = filepath.Join(dir, "manager")
		cmd := exec.Command("go", "build", "-o", built.bin, "./cmd/manager")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.bin != "" {
		_ = os.RemoveAll(filepath.Dir(built.bin))
	}
	os.Exit(code)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// waitHTTP waits until url answers 200 with a body containing want, failing
// early if the manager exits.
func waitHTTP(t *testing.T, url, want string, exited <-chan error) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			t.Fatalf("manager exited before %s answered: %v", url, err)
		default:
		}
		last = get(url, want)
		if last == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: %v", url, last)
}

func get(url, want string) error {
	resp, err := http.Get(url) //nolint:gosec // a loopback address the test chose
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %s", resp.StatusCode, body)
	}
	if !strings.Contains(string(body), want) {
		return errors.New("body does not contain " + want)
	}
	return nil
}
