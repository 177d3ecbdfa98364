//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// podWatch runs kubectl get pods --watch over the pods a selector selects in
// a namespace and hands each event, the first list's included, to a function,
// in the order the API server sent them, on one goroutine.
type podWatch struct {
	cancel   context.CancelFunc
	done     chan error
	stopOnce sync.Once
	exit     error // kubectl's, once stopped
}

func watchPods(t *testing.T, ns, selector string, see func(typ string, p corev1.Pod)) *podWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &podWatch{cancel: cancel, done: make(chan error, 1)}
	cmd := exec.CommandContext(ctx, filepath.Join(root, "bin", "kubectl"), "get", "pods", "-n", ns, "-l", selector,
		"--watch", "--output-watch-events", "-o", "json")
	cmd.Env = os.Environ()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		dec := json.NewDecoder(bufio.NewReader(out))
		for {
			var ev struct {
				Type   string     `json:"type"`
				Object corev1.Pod `json:"object"`
			}
			if err := dec.Decode(&ev); err != nil {
				break
			}
			see(ev.Type, ev.Object)
		}
		w.done <- cmd.Wait()
	}()
	t.Cleanup(w.stop)
	return w
}

// stop ends the watch and waits for kubectl to exit, every event seen; it
// may be called again.
func (w *podWatch) stop() {
	w.stopOnce.Do(func() {
		w.cancel()
		w.exit = <-w.done // killed by the cancel: kept for a debugger, it says nothing
	})
}
