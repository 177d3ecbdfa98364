package status

import "testing"

func TestProgressOnly(t *testing.T) {
	statusMap := func(phase string, replicas, ready int64, readyStatus, readyMsg string, gen int64) map[string]any {
		return map[string]any{
			"phase": phase, "message": readyMsg, "replicas": replicas, "readyReplicas": ready, "observedGeneration": gen,
			"conditions": []any{
				map[string]any{"type": ConditionReleased, "status": "True", "reason": ReasonUpgradeSucceeded, "message": "Revision 2 is deployed"},
				map[string]any{"type": ConditionReady, "status": readyStatus, "reason": ReasonProgressing, "message": readyMsg},
			},
		}
	}
	rolling := statusMap(PhaseUpdating, 3, 2, "False", "2/2 replicas ready", 2)
	tests := []struct {
		name          string
		current, next map[string]any
		want          bool
	}{
		{"counts and messages move", rolling, statusMap(PhaseUpdating, 2, 2, "False", "Deployment/web is not ready: 1 old replica is pending termination", 2), true},
		{"the same status", rolling, rolling, true},
		{"Ready turns True", rolling, statusMap(PhaseUpdating, 2, 2, "True", "2/2 replicas ready", 2), false},
		{"the phase changes", rolling, statusMap(PhaseRunning, 3, 2, "False", "2/2 replicas ready", 2), false},
		{"a new generation", rolling, statusMap(PhaseUpdating, 3, 2, "False", "2/2 replicas ready", 3), false},
		{"nothing written yet", nil, rolling, false},
		{"a key is added", rolling, with(rolling, "failures", map[string]any{"count": int64(1)}), false},
		{"the Released condition's message changes", rolling, withReleasedMessage(rolling, "Revision 3 is deployed"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ProgressOnly(tt.current, tt.next); got != tt.want {
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
