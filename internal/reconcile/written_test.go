package reconcile

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestMemory_ProgressWaitMeasuresFromTheLastWrite(t *testing.T) {
	var w memory
	key := types.NamespacedName{Namespace: "ns", Name: "web"}
	at := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	if d := w.progressWait(key, at); d != 0 {
		t.Errorf("nothing written since start: wait %v, want 0", d)
	}
	w.wrote(key, "7", at)
	if d := w.progressWait(key, at.Add(2*time.Second)); d != progressInterval-2*time.Second {
		t.Errorf("2 s after a write: wait %v, want %v", d, progressInterval-2*time.Second)
	}
	if d := w.progressWait(key, at.Add(progressInterval+time.Second)); d != 0 {
		t.Errorf("past the interval: wait %v, want 0", d)
	}
	w.Forget(key)
	if d := w.progressWait(key, at.Add(time.Second)); d != 0 {
		t.Errorf("forgotten: wait %v, want 0", d)
	}
}
