package reconcile

import (
	"maps"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/reconcile/charttest"
	"github.com/rudder-operator/rudder/internal/stored"
)

// testEnded reconciles the resource key again: its chart test run ended
// (package charttest), and the reconcile records the result.
func (r *Reconciler) testEnded(key types.NamespacedName) {
	if r.testsDone == nil {
		return
	}
	obj := r.newObject()
	obj.SetNamespace(key.Namespace)
	obj.SetName(key.Name)
	r.testsDone <- event.GenericEvent{Object: obj}
}

// TestStarted records run as key's run under way.
func (m *memory) TestStarted(key types.NamespacedName, run *charttest.Run) {
	m.update(key, func(e *entry) { e.testing = run })
}

// TestRunning returns a copy of key's run under way or finished and not
// recorded, and whether there is one.
func (m *memory) TestRunning(key types.NamespacedName) (charttest.Run, bool) {
	var run charttest.Run
	var ok bool
	m.lookup(key, func(e *entry) {
		if e.testing != nil {
			run, ok = *e.testing, true
		}
	})
	return run, ok
}

// TestFinished records how run ended and reports whether it is still key's
// run: one forgotten meanwhile (the resource deleted) is dropped.
func (m *memory) TestFinished(key types.NamespacedName, run *charttest.Run, result helm.TestRun, err error) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	run.Done, run.Result, run.Err = true, result, err
	e, ok := m.m[key]
	return ok && e.testing == run
}

// TestStopped forgets key's run once it has finished.
func (m *memory) TestStopped(key types.NamespacedName) {
	m.lookup(key, func(e *entry) {
		if e.testing != nil && e.testing.Done {
			e.testing = nil
		}
	})
}

// TestRecorded remembers run, whose result was just recorded on its revision.
func (m *memory) TestRecorded(key types.NamespacedName, run charttest.Recorded) {
	m.update(key, func(e *entry) { e.tested = &run })
}

// TestAnswered reports whether the last run answered the request token: a
// status read from before that run's write does not show it yet.
func (m *memory) TestAnswered(key types.NamespacedName, token string) bool {
	answered := false
	m.lookup(key, func(e *entry) { answered = e.tested != nil && token != "" && e.tested.Request == token })
	return answered
}

// testOverlay puts the labels of the last run on the revision of hist it was
// made on, while storage does not show them (on a copy of its labels: hist's
// may be the cache's), and returns the run's message. A run whose revision is
// gone is forgotten.
func (m *memory) testOverlay(key types.NamespacedName, hist []stored.Revision) string {
	var msg string
	m.lookup(key, func(e *entry) {
		run := e.tested
		if run == nil {
			return
		}
		for i := range hist {
			if hist[i].UID != run.UID {
				continue
			}
			if hist[i].Labels[stored.LabelTestedAt] != run.Labels[stored.LabelTestedAt] {
				labels := maps.Clone(hist[i].Labels)
				maps.Copy(labels, run.Labels)
				hist[i].Labels = labels
			}
			msg = run.Message
			return
		}
		e.tested = nil
	})
	return msg
}
