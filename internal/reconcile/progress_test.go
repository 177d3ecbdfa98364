package reconcile

import (
	"testing"
	"time"

	"github.com/rudder-operator/rudder/internal/reconcile/status"

	"k8s.io/apimachinery/pkg/types"
)

func TestProgressOnly(t *testing.T) {
	statusMap := func(phase string, replicas, ready int64, readyStatus, readyMsg string, gen int64) map[string]any {
		return map[string]any{
			"phase": phase, "message": readyMsg, "replicas": replicas, "readyReplicas": ready, "observedGeneration": gen,
			"conditions": []any{
				map[string]any{"type": status.ConditionReleased, "status": "True", "reason": status.ReasonUpgradeSucceeded, "message": "Revision 2 is deployed"},
				map[string]any{"type": status.ConditionReady, "status": readyStatus, "reason": status.ReasonProgressing, "message": readyMsg},
			},
		}
	}
	rolling := statusMap(status.PhaseUpdating, 3, 2, "False", "2/2 replicas ready", 2)
	tests := []struct {
		name          string
		current, next map[string]any
		want          bool
	}{
		{"counts and messages move", rolling, statusMap(status.PhaseUpdating, 2, 2, "False", "Deployment/web is not ready: 1 old replica is pending termination", 2), true},
		{"the same status", rolling, rolling, true},
		{"Ready turns True", rolling, statusMap(status.PhaseUpdating, 2, 2, "True", "2/2 replicas ready", 2), false},
		{"the phase changes", rolling, statusMap(status.PhaseRunning, 3, 2, "False", "2/2 replicas ready", 2), false},
		{"a new generation", rolling, statusMap(status.PhaseUpdating, 3, 2, "False", "2/2 replicas ready", 3), false},
		{"nothing written yet", nil, rolling, false},
		{"a key is added", rolling, with(rolling, "failures", map[string]any{"count": int64(1)}), false},
		{"the Released condition's message changes", rolling, withReleasedMessage(rolling, "Revision 3 is deployed"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := progressOnly(tt.current, tt.next); got != tt.want {
				t.Errorf("progressOnly = %v, want %v", got, tt.want)
			}
		})
	}
	if rolling["replicas"] != int64(3) || rolling["conditions"].([]any)[1].(map[string]any)["message"] != "2/2 replicas ready" {
		t.Errorf("progressOnly changed the status it compared: %v", rolling)
	}
}

func with(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{k: v}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func withReleasedMessage(m map[string]any, msg string) map[string]any {
	out := with(m, "conditions", nil)
	conds := append([]any(nil), m["conditions"].([]any)...)
	released := map[string]any{}
	for k, v := range conds[0].(map[string]any) {
		released[k] = v
	}
	released["message"] = msg
	conds[0] = released
	out["conditions"] = conds
	return out
}

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
