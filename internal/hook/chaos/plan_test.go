package chaos

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var t0 = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

// pods returns n pods named p0…, Ready unless their index is in notReady.
func pods(n int, notReady ...int) []corev1.Pod {
	out := make([]corev1.Pod, n)
	for i := range out {
		st := corev1.ConditionTrue
		for _, j := range notReady {
			if i == j {
				st = corev1.ConditionFalse
			}
		}
		out[i] = corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i))},
			Status:     corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}},
		}
	}
	return out
}

// noShuffle keeps the order: the plan takes the first Ready pods.
func noShuffle(int, func(i, j int)) {}

// reverse puts the last Ready pods first, as a shuffle may.
func reverse(n int, swap func(i, j int)) {
	for i := 0; i < n/2; i++ {
		swap(i, n-1-i)
	}
}

func spec(count, maxUnavailable int) Spec {
	return Spec{Action: ActionKill, Count: count, Interval: 10 * time.Second, Duration: 40 * time.Second, MaxUnavailable: maxUnavailable}
}

func names(refs []PodRef) string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.Name
	}
	return strings.Join(out, ",")
}

func TestPlan(t *testing.T) {
	tracking := State{Rounds: 1, History: []Round{{Round: 1, Pods: []string{"p9"}, ReadyBefore: 4}}}
	tests := []struct {
		name        string
		spec        Spec
		state       State
		pods        []corev1.Pod
		shuffle     func(int, func(i, j int))
		wantPods    string
		wantSkipped string
	}{
		{name: "one of four Ready pods", spec: spec(1, 1), pods: pods(4), wantPods: "p0"},
		{name: "picks among the shuffled Ready pods", spec: spec(1, 1), pods: pods(4), shuffle: reverse, wantPods: "p3"},
		{name: "never more than count", spec: spec(2, 5), pods: pods(4), wantPods: "p0,p1"},
		{name: "never more than the budget allows", spec: spec(3, 2), pods: pods(4), wantPods: "p0,p1"},
		{name: "a pod not Ready takes from the budget", spec: spec(2, 2), pods: pods(4, 0), wantPods: "p1"},
		{name: "never a pod that is not Ready", spec: spec(4, 4), pods: pods(3, 1), wantPods: "p0,p2"},
		{name: "none while the budget is spent", spec: spec(1, 1), pods: pods(4, 2),
			wantSkipped: "the budget is spent: 1 selected pod(s) not Ready, maxUnavailable 1"},
		{name: "a pod missing since the last round takes from the budget", spec: spec(1, 1), state: tracking, pods: pods(3),
			wantSkipped: "the budget is spent: 1 selected pod(s) not Ready, maxUnavailable 1"},
		{name: "no Ready pod", spec: spec(1, 1), pods: pods(2, 0, 1), wantSkipped: "no selected pod is Ready"},
		{name: "no pod at all", spec: spec(1, 1), wantSkipped: "no selected pod is Ready"},
		{name: "a percent of the selected pods, rounded down", spec: Spec{Percent: 50, MaxUnavailable: 10}, pods: pods(5), wantPods: "p0,p1"},
		{name: "a percent is at least one pod", spec: Spec{Percent: 10, MaxUnavailable: 10}, pods: pods(4), wantPods: "p0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			shuffle := tt.shuffle
			if shuffle == nil {
				shuffle = noShuffle
			}
			st := tt.state
			r := plan(tt.spec, &st, observe(tt.pods), t0, shuffle)
			if got := names(r.Planned); got != tt.wantPods {
				t.Errorf("planned %q, want %q", got, tt.wantPods)
			}
			if r.Skipped != tt.wantSkipped {
				t.Errorf("skipped %q, want %q", r.Skipped, tt.wantSkipped)
			}
			if r.Round != st.Rounds+1 {
				t.Errorf("round %d, want %d", r.Round, st.Rounds+1)
			}
		})
	}
}

func TestPlan_PicksAtRandom(t *testing.T) {
	seen := map[string]bool{}
	h := &Hook{}
	for range 200 {
		r := plan(spec(1, 1), &State{}, observe(pods(4)), t0, h.shuffle())
		seen[names(r.Planned)] = true
	}
	if len(seen) != 4 {
		t.Errorf("200 rounds picked %v, want each of the 4 pods at least once", seen)
	}
}

func TestToAct(t *testing.T) {
	planned := &Round{Planned: []PodRef{{Name: "p0", UID: "uid-0"}, {Name: "p1", UID: "uid-1"}}}
	deleting := pods(4)
	deleting[0].DeletionTimestamp = &metav1.Time{Time: t0}
	replaced := pods(4)
	replaced[0].UID = "uid-new"
	tests := []struct {
		name     string
		spec     Spec
		pods     []corev1.Pod
		wantDone string
		wantAct  string
	}{
		{name: "both still Ready", spec: spec(2, 2), pods: pods(4), wantAct: "p0,p1"},
		{name: "one already being deleted: a try cut short", spec: spec(2, 2), pods: deleting, wantDone: "p0", wantAct: "p1"},
		{name: "one replaced by a pod of the same name", spec: spec(2, 2), pods: replaced, wantDone: "p0", wantAct: "p1"},
		{name: "one no longer Ready is left alone", spec: spec(2, 2), pods: pods(4, 1), wantAct: "p0"},
		{name: "another pod fell: the budget shrinks", spec: spec(2, 2), pods: pods(4, 3), wantAct: "p0"},
		{name: "the budget is spent by others", spec: spec(2, 1), pods: pods(4, 2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done, act := toAct(tt.spec, planned, observe(tt.pods))
			if got := strings.Join(done, ","); got != tt.wantDone {
				t.Errorf("done %q, want %q", got, tt.wantDone)
			}
			if got := names(act); got != tt.wantAct {
				t.Errorf("act %q, want %q", got, tt.wantAct)
			}
		})
	}
}

func TestState_Advance(t *testing.T) {
	tests := []struct {
		name     string
		spec     Spec
		now      time.Duration // since the start
		wantNext time.Duration // since the start; -1: none left
	}{
		{name: "the second round", spec: spec(1, 1), now: 0, wantNext: 10 * time.Second},
		{name: "on the grid, not from now", spec: spec(1, 1), now: 12 * time.Second, wantNext: 20 * time.Second},
		{name: "missed rounds are not made up", spec: spec(1, 1), now: 25 * time.Second, wantNext: 30 * time.Second},
		{name: "no round at the end of the duration", spec: spec(1, 1), now: 30 * time.Second, wantNext: -1},
		{name: "one round without a duration", spec: Spec{Interval: 10 * time.Second}, now: 0, wantNext: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := metav1.NewMicroTime(t0)
			st := State{StartedAt: &start}
			st.advance(tt.spec, t0.Add(tt.now))
			switch {
			case tt.wantNext < 0 && st.NextRoundAt != nil:
				t.Errorf("next round at +%s, want none", st.NextRoundAt.Sub(t0))
			case tt.wantNext >= 0 && st.NextRoundAt == nil:
				t.Errorf("no next round, want one at +%s", tt.wantNext)
			case tt.wantNext >= 0 && st.NextRoundAt.Sub(t0) != tt.wantNext:
				t.Errorf("next round at +%s, want +%s", st.NextRoundAt.Sub(t0), tt.wantNext)
			}
		})
	}
}

func TestState_Due(t *testing.T) {
	start := metav1.NewMicroTime(t0)
	at := func(d time.Duration) *metav1.MicroTime { m := metav1.NewMicroTime(t0.Add(d)); return &m }
	tests := []struct {
		name  string
		spec  Spec
		state State
		now   time.Duration
		want  bool
	}{
		{name: "the first round", spec: spec(1, 1), state: State{StartedAt: &start, NextRoundAt: &start}, want: true},
		{name: "before its time", spec: spec(1, 1), state: State{StartedAt: &start, NextRoundAt: at(10 * time.Second), Rounds: 1}, now: 9 * time.Second},
		{name: "at its time", spec: spec(1, 1), state: State{StartedAt: &start, NextRoundAt: at(10 * time.Second), Rounds: 1}, now: 10 * time.Second, want: true},
		{name: "past the duration, after a long stop", spec: spec(1, 1), state: State{StartedAt: &start, NextRoundAt: at(30 * time.Second), Rounds: 3},
			now: 45 * time.Second},
		{name: "a round written ahead is acted on, not planned again", spec: spec(1, 1),
			state: State{StartedAt: &start, NextRoundAt: &start, Pending: &Round{Round: 1}}},
		{name: "one round only without a duration", spec: Spec{Interval: time.Second}, state: State{StartedAt: &start, NextRoundAt: &start, Rounds: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.state.due(tt.spec, t0.Add(tt.now)); got != tt.want {
				t.Errorf("due = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestState_Track(t *testing.T) {
	round := func() State {
		start := metav1.NewMicroTime(t0)
		next := metav1.NewMicroTime(t0.Add(10 * time.Second))
		return State{StartedAt: &start, NextRoundAt: &next, Rounds: 1,
			History: []Round{{Round: 1, At: start, Pods: []string{"p0"}, ReadyBefore: 4}}}
	}
	tests := []struct {
		name            string
		pods            []corev1.Pod
		now             time.Duration
		wantRecovery    string
		wantLate        bool
		wantUnrecovered bool
		wantCondition   metav1.ConditionStatus
	}{
		{name: "a replacement not Ready yet", pods: pods(4, 3), now: time.Second, wantCondition: metav1.ConditionUnknown},
		{name: "a pod not replaced yet", pods: pods(3), now: time.Second, wantCondition: metav1.ConditionUnknown},
		{name: "all Ready again", pods: pods(4), now: 1234 * time.Millisecond, wantRecovery: "1.23s", wantCondition: metav1.ConditionTrue},
		{name: "all Ready again, too late", pods: pods(4), now: 12 * time.Second, wantRecovery: "12s", wantLate: true,
			wantCondition: metav1.ConditionFalse},
		{name: "not Ready within the interval", pods: pods(4, 0), now: 11 * time.Second, wantLate: true, wantCondition: metav1.ConditionFalse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := round()
			st.track(spec(1, 1), observe(tt.pods), t0.Add(tt.now))
			r := st.History[0]
			if r.Recovery != tt.wantRecovery || r.Late != tt.wantLate || r.Unrecovered != tt.wantUnrecovered {
				t.Errorf("recovery %q late %v unrecovered %v, want %q %v %v", r.Recovery, r.Late, r.Unrecovered,
					tt.wantRecovery, tt.wantLate, tt.wantUnrecovered)
			}
			if tt.wantRecovery != "" && st.LastRecovery != tt.wantRecovery {
				t.Errorf("lastRecovery %q, want %q", st.LastRecovery, tt.wantRecovery)
			}
			if c := st.condition(spec(1, 1)); c.Status != tt.wantCondition {
				t.Errorf("condition %s (%s), want %s", c.Status, c.Message, tt.wantCondition)
			}
		})
	}
}

// After the last round, rudder waits an interval for the pods, then gives up
// and the schedule completes.
func TestState_Phase(t *testing.T) {
	start := metav1.NewMicroTime(t0)
	last := metav1.NewMicroTime(t0.Add(30 * time.Second))
	recovered := metav1.NewMicroTime(t0.Add(31 * time.Second))
	tests := []struct {
		name      string
		state     State
		pods      []corev1.Pod
		now       time.Duration
		wantPhase string
	}{
		{name: "written ahead", state: State{StartedAt: &start, Pending: &Round{Round: 1, Planned: []PodRef{{Name: "p0"}}}}, pods: pods(4), wantPhase: PhaseRunning},
		{name: "the last round recovering", state: State{StartedAt: &start, Rounds: 4,
			History: []Round{{Round: 4, At: last, Pods: []string{"p0"}, ReadyBefore: 4}}}, pods: pods(3), now: 31 * time.Second, wantPhase: PhaseRunning},
		{name: "the last round recovered", state: State{StartedAt: &start, Rounds: 4,
			History: []Round{{Round: 4, At: last, Pods: []string{"p0"}, ReadyBefore: 4, RecoveredAt: &recovered}}}, pods: pods(4), now: 31 * time.Second,
			wantPhase: PhaseCompleted},
		{name: "the last round never recovered", state: State{StartedAt: &start, Rounds: 4,
			History: []Round{{Round: 4, At: last, Pods: []string{"p0"}, ReadyBefore: 4}}}, pods: pods(3), now: 41 * time.Second, wantPhase: PhaseCompleted},
		{name: "refused", state: State{StartedAt: &start, Rounds: 1, NextRoundAt: &last,
			History: []Round{{Round: 1, At: start, Refused: []string{"the eviction of pod p0 was refused"}}}}, pods: pods(4), now: time.Second,
			wantPhase: PhaseBlocked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := tt.state
			st.track(spec(1, 1), observe(tt.pods), t0.Add(tt.now))
			if got, msg := st.phase(spec(1, 1), t0.Add(tt.now)); got != tt.wantPhase {
				t.Errorf("phase %s (%s), want %s", got, msg, tt.wantPhase)
			}
		})
	}
}

func TestParseSpec(t *testing.T) {
	sel := map[string]any{"matchLabels": map[string]any{"app": "web"}}
	tests := []struct {
		name    string
		values  map[string]any
		want    string // Spec fields, or the error
		wantErr bool
	}{
		{name: "defaults", values: map[string]any{"selector": sel}, want: "app=web kill 1 0 30s 0s 1"},
		{name: "all fields", values: map[string]any{"selector": sel, "action": "evict", "percent": "25%", "interval": "10s",
			"duration": "40s", "maxUnavailable": int64(2)}, want: "app=web evict 1 25 10s 40s 2"},
		{name: "empty selector", values: map[string]any{"selector": map[string]any{"matchLabels": map[string]any{}}}, wantErr: true,
			want: "spec.selector: must not be empty, or every pod of the namespace would be chosen; write {matchLabels: {app: my-webapp}}"},
		{name: "no selector", values: map[string]any{}, wantErr: true,
			want: "spec.selector: missing; write the pods to act on, such as {matchLabels: {app: my-webapp}}"},
		{name: "selector not a mapping", values: map[string]any{"selector": "app=web"}, wantErr: true,
			want: "spec.selector: is not a mapping; write {matchLabels: {app: my-webapp}}"},
		{name: "interval 0", values: map[string]any{"selector": sel, "interval": "0s"}, wantErr: true,
			want: `spec.interval: "0s" is not a duration more than 0; write such as "30s" or "5m"`},
		{name: "percent over 100", values: map[string]any{"selector": sel, "percent": "150%"}, wantErr: true,
			want: `spec.percent: "150%" is not a percent from 1% to 100%; write such as "25%"`},
		{name: "unknown action", values: map[string]any{"selector": sel, "action": "crash"}, wantErr: true,
			want: `spec.action: "crash" is not an action; write kill or evict`},
		{name: "count 0", values: map[string]any{"selector": sel, "count": int64(0)}, wantErr: true,
			want: "spec.count: 0 is less than 1; write 1 or more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parseSpec(tt.values)
			if tt.wantErr {
				if err == nil || err.Error() != tt.want {
					t.Errorf("err = %v, want %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("%s %s %d %d %s %s %d", s.Selector, s.Action, s.Count, s.Percent, s.Interval, s.Duration, s.MaxUnavailable)
			if got != tt.want {
				t.Errorf("spec %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEncode(t *testing.T) {
	tests := []struct {
		name     string
		written  map[string]any
		wantNull []string
		wantNone []string
	}{
		{name: "nothing written yet", wantNone: []string{"pending", "nextRoundAt", "message"}},
		{name: "a round acted on is no longer pending", written: map[string]any{"pending": map[string]any{"round": int64(1)}, "rounds": int64(0)},
			wantNull: []string{"pending"}, wantNone: []string{"nextRoundAt"}},
		{name: "the last round is past", written: map[string]any{"nextRoundAt": "2026-12-04T12:00:30.000000Z"}, wantNull: []string{"nextRoundAt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := encode(State{Phase: PhaseRunning, Rounds: 1}, tt.written)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range tt.wantNull {
				if v, ok := m[k]; !ok || v != nil {
					t.Errorf("%s = %v (present %v), want null", k, v, ok)
				}
			}
			for _, k := range tt.wantNone {
				if _, ok := m[k]; ok {
					t.Errorf("%s present, want absent: the status never held it", k)
				}
			}
			if m["phase"] != PhaseRunning || m["rounds"] != int64(1) {
				t.Errorf("phase %v rounds %v, want Running 1", m["phase"], m["rounds"])
			}
		})
	}
}
