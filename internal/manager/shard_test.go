package manager_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rudder-operator/rudder/internal/shard"
	"github.com/rudder-operator/rudder/test/testenv"
)

// TestShards_SplitTheNamespaces runs two managers, shard 0 and shard 1 of 2,
// (the manager binary, --shards from the environment as a Deployment sets
// it) against an API server without the ShardedListAndWatch gate (rudder
// filters) and with it (the API server filters). Each logs the mode it found,
// installs the release of every Network in its namespaces, and never
// reconciles one of the other's: its caches do not hold them.
func TestShards_SplitTheNamespaces(t *testing.T) {
	ctrllog.SetLogger(logr.Discard()) // envtest's client logs through it
	bin := buildManager(t)
	for _, tt := range []struct {
		gates string
		mode  shard.Mode
	}{
		{"", shard.ModeClient},
		{"ShardedListAndWatch=true", shard.ModeServer},
	} {
		t.Run(string(tt.mode), func(t *testing.T) {
			t.Parallel() // an API server each
			env, k8s := startAPIServer(t, tt.gates)
			ctx := context.Background()

			// Two namespaces of each shard.
			owner := map[string]int{}
			for n := 0; len(owner) < 4; n++ {
				ns := fmt.Sprintf("%c%d-net", 'a'+n%26, n)
				i := shard.Of(ns, 2).Index
				if count(owner, i) < 2 {
					owner[ns] = i
				}
			}
			for ns := range owner {
				if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
					t.Fatal(err)
				}
			}

			logs := make([]*lines, 2)
			for i := range 2 {
				logs[i] = runManager(t, bin, env, []string{"RUDDER_SHARDS=2"}, "--leader-election-namespace=default", fmt.Sprintf("--shard=%d", i))
			}
			for i := range 2 {
				testenv.Eventually(t, fmt.Sprintf("shard %d's log of mode %s", i, tt.mode), func() error {
					if !logs[i].has(`"shard":"`+fmt.Sprintf("%d-of-2", i)+`"`, `"mode":"`+string(tt.mode)+`"`) {
						return fmt.Errorf("no such line")
					}
					return nil
				})
			}

			for ns := range owner {
				net := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": "samplecrd.k8s.io/v1", "kind": "Network",
					"metadata": map[string]any{"name": "net", "namespace": ns},
					"spec":     map[string]any{"cidr": "10.0.0.0/16", "gateway": "10.0.0.1"},
				}}
				if err := k8s.Create(ctx, net); err != nil {
					t.Fatal(err)
				}
			}
			for ns, i := range owner {
				testenv.Eventually(t, "the release of Network "+ns+"/net installed by shard "+fmt.Sprint(i), func() error {
					revs, err := testenv.Revisions(ctx, k8s, ns, "network-net")
					if err != nil || len(revs) == 0 || revs[len(revs)-1] != "1:deployed" {
						return fmt.Errorf("revisions %v (err %w)", revs, err)
					}
					if !logs[i].has("Helm Install succeeded", `"namespace":"`+ns+`"`) {
						return fmt.Errorf("shard %d did not log the install", i)
					}
					return nil
				})
			}
			// Every reconcile logs its planned step: a shard that saw the
			// other's Networks would have reconciled them.
			for ns, i := range owner {
				if other := 1 - i; logs[other].has("Planned step", `"namespace":"`+ns+`"`) {
					t.Errorf("shard %d reconciled Network %s/net, of shard %d", other, ns, i)
				}
			}
		})
	}
}

func count(owner map[string]int, i int) int {
	n := 0
	for _, o := range owner {
		if o == i {
			n++
		}
	}
	return n
}

// lines collects a process's output, line by line (a write is whole lines).
type lines struct {
	mu  sync.Mutex
	all []string
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, strings.Split(strings.TrimRight(string(p), "\n"), "\n")...)
	return len(p), nil
}

// has reports whether a line holds every part.
func (l *lines) has(parts ...string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
next:
	for _, line := range l.all {
		for _, p := range parts {
			if !strings.Contains(line, p) {
				continue next
			}
		}
		return true
	}
	return false
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.all, "\n")
}

// TestWatchLabelSelector_ServesOnlySelected runs the manager binary with
// --watch-label-selector=team=a: the Network labeled team=a is released, the
// one labeled team=b is never reconciled, nor even seen.
func TestWatchLabelSelector_ServesOnlySelected(t *testing.T) {
	t.Parallel() // an API server of its own
	ctrllog.SetLogger(logr.Discard())
	bin := buildManager(t)
	env, k8s := startAPIServer(t, "")
	ctx := context.Background()
	out := runManager(t, bin, env, nil, "--watch-label-selector=team=a")
	for _, team := range []string{"a", "b"} {
		net := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "samplecrd.k8s.io/v1", "kind": "Network",
			"metadata": map[string]any{"name": "net-" + team, "namespace": "default", "labels": map[string]any{"team": team}},
			"spec":     map[string]any{"cidr": "10.0.0.0/16", "gateway": "10.0.0.1"},
		}}
		if err := k8s.Create(ctx, net); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, "the release of Network net-a installed", func() error {
		revs, err := testenv.Revisions(ctx, k8s, "default", "network-net-a")
		if err != nil || len(revs) == 0 || revs[len(revs)-1] != "1:deployed" {
			return fmt.Errorf("revisions %v (err %w)", revs, err)
		}
		return nil
	})
	if out.has("Planned step", `"name":"net-b"`) {
		t.Error("the manager reconciled Network net-b, labeled team=b")
	}
	if revs, err := testenv.Revisions(ctx, k8s, "default", "network-net-b"); err != nil || len(revs) != 0 {
		t.Errorf("Network net-b, labeled team=b, has revisions %v (err %v)", revs, err)
	}
}

// startAPIServer starts envtest with kube-apiserver's feature gates, and
// returns it and a client of it.
func startAPIServer(t *testing.T, gates string) (*envtest.Environment, client.Client) {
	t.Helper()
	env, cfg, err := testenv.StartWithGates(gates)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	k8s, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return env, k8s
}

// runManager runs the manager binary bin against env with args, and the
// environment's variables besides KUBECONFIG, until the test ends; its
// output goes to the returned lines.
func runManager(t *testing.T, bin string, env *envtest.Environment, vars []string, args ...string) *lines {
	t.Helper()
	out := &lines{}
	cmd := exec.Command(bin, append([]string{"--metrics-bind-address=0", "--health-probe-bind-address=0", "--log-level=debug"}, args...)...)
	cmd.Env = append(append(os.Environ(), "KUBECONFIG="+adminKubeconfig(t, env)), vars...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("manager %v:\n%s", args, out)
		}
	})
	return out
}
