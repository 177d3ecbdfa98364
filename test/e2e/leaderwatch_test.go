//go:build e2e

package e2e

import (
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// leaderWatch follows every change of the pods selector selects in a
// namespace (kubectl get --watch) and fails the test at any state in which
// two of them carry the leader label, terminating pods included: where a
// sampler looks now and then, it sees each state the API server went
// through, in order, however fast a failover is.
type leaderWatch struct {
	t           *testing.T
	mu          sync.Mutex
	labeled     map[string]bool // the pods carrying the label in the last state seen
	changes     int             // states seen after the first list
	leaders     map[string]bool // every pod seen labeled
	initialized chan struct{}
	watch       *podWatch
	stopOnce    sync.Once
}

func watchLeaders(t *testing.T, ns, selector string) *leaderWatch {
	t.Helper()
	w := &leaderWatch{t: t, labeled: map[string]bool{}, leaders: map[string]bool{}, initialized: make(chan struct{})}
	w.watch = watchPods(t, ns, selector, w.see)
	t.Cleanup(func() { w.stop() })
	select {
	case <-w.initialized:
	case <-time.After(time.Minute):
		t.Fatalf("the watch of pods %s in %s saw no leader in a minute", selector, ns)
	}
	return w
}

// see applies one watch event to the state, and checks it.
func (w *leaderWatch) see(typ string, p corev1.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if typ == "DELETED" || p.Labels[labelLeader] != "true" {
		delete(w.labeled, p.Name)
	} else {
		w.labeled[p.Name] = true
		w.leaders[p.Name] = true
	}
	select {
	case <-w.initialized:
	default:
		if len(w.labeled) == 1 {
			close(w.initialized) // the first list holds the leader
		}
		return
	}
	w.changes++
	if len(w.labeled) > 1 {
		pods := make([]string, 0, len(w.labeled))
		for name := range w.labeled {
			pods = append(pods, name)
		}
		sort.Strings(pods)
		w.t.Errorf("after %s of pod %s: %d pods labeled %s=true: %v", typ, p.Name, len(pods), labelLeader, pods)
	}
}

// stop ends the watch, logs what it saw, and returns how many states it
// checked after the first list and how many pods it saw lead. It may be
// called again.
func (w *leaderWatch) stop() (changes, leaders int) {
	w.stopOnce.Do(func() {
		w.watch.stop()
		w.mu.Lock()
		defer w.mu.Unlock()
		w.t.Logf("leader watch: %d changes of the pods seen, %d pods led in turn, never two labeled at once unless reported above",
			w.changes, len(w.leaders))
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changes, len(w.leaders)
}
