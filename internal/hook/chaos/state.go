package chaos

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Phases of a PodChaos's schedule (status.chaos.phase).
const (
	PhaseRunning   = "Running"
	PhaseCompleted = "Completed"
	PhasePaused    = "Paused"
	PhaseBlocked   = "Blocked"
)

// historyLimit is how many rounds status.chaos.history keeps, the newest last.
const historyLimit = 10

// State is status.chaos: the schedule, where a restarted or new manager
// finds it, and what its rounds did.
type State struct {
	Phase   string `json:"phase"`
	Message string `json:"message,omitempty"`
	// Generation is the spec generation the schedule runs for: a new spec starts it again.
	Generation  int64             `json:"generation"`
	StartedAt   *metav1.MicroTime `json:"startedAt,omitempty"`
	NextRoundAt *metav1.MicroTime `json:"nextRoundAt,omitempty"`
	Rounds      int               `json:"rounds"`
	// LastRecovery and SlowestRecovery are recovery times of the schedule's rounds, as Go durations.
	LastRecovery    string `json:"lastRecovery,omitempty"`
	SlowestRecovery string `json:"slowestRecovery,omitempty"`
	// LateRecoveries counts rounds whose pods were not all Ready again within the interval.
	LateRecoveries int `json:"lateRecoveries,omitempty"`
	// Pending is a round planned and written ahead, not yet recorded as done.
	Pending *Round  `json:"pending,omitempty"`
	History []Round `json:"history,omitempty"`
}

// Round is one round of a schedule.
type Round struct {
	Round  int              `json:"round"`
	At     metav1.MicroTime `json:"at"`
	Action string           `json:"action"`
	// Planned are the pods a pending round acts on, by UID.
	Planned []PodRef `json:"planned,omitempty"`
	// Pods are the pods the round acted on.
	Pods []string `json:"pods,omitempty"`
	// Refused says, per pod, why the API server refused the action (a PodDisruptionBudget).
	Refused []string `json:"refused,omitempty"`
	// Skipped says why the round acted on no pod.
	Skipped string `json:"skipped,omitempty"`
	// ReadyBefore is how many selected pods were Ready when the round was planned.
	ReadyBefore int `json:"readyBefore"`
	// Recovery is the time until every selected pod was Ready again, with
	// at least ReadyBefore of them; RecoveredAt when that was seen.
	Recovery    string            `json:"recovery,omitempty"`
	RecoveredAt *metav1.MicroTime `json:"recoveredAt,omitempty"`
	// Late: the pods were not all Ready again within the interval.
	Late bool `json:"late,omitempty"`
	// Unrecovered: rudder stopped waiting (another round acted, or the
	// schedule ended an interval ago) before the pods were all Ready again.
	Unrecovered bool `json:"unrecovered,omitempty"`
}

// PodRef names a pod and, for a pending round, the UID it must still have.
type PodRef struct {
	Name string    `json:"name"`
	UID  types.UID `json:"uid"`
}

// restart starts a new schedule for generation at now, keeping the history.
func (st State) restart(generation int64, now time.Time) State {
	at := metav1.NewMicroTime(now)
	return State{Phase: PhaseRunning, Generation: generation, StartedAt: &at, NextRoundAt: &at, History: st.History}
}

// due reports whether a round starts now: its time has come and the schedule
// is not over (one round without a duration; none past the duration).
func (st *State) due(s Spec, now time.Time) bool {
	if st.Pending != nil || st.NextRoundAt == nil || now.Before(st.NextRoundAt.Time) {
		return false
	}
	if s.Duration == 0 {
		return st.Rounds == 0
	}
	return now.Sub(st.StartedAt.Time) < s.Duration
}

// advance sets NextRoundAt to the first time on the schedule's grid
// (StartedAt + k·Interval) after now, or clears it when no round is left:
// rounds a stopped manager missed are not made up.
func (st *State) advance(s Spec, now time.Time) {
	start := st.StartedAt.Time
	next := start.Add((now.Sub(start)/s.Interval + 1) * s.Interval)
	if s.Duration == 0 || next.Sub(start) >= s.Duration {
		st.NextRoundAt = nil
		return
	}
	at := metav1.NewMicroTime(next)
	st.NextRoundAt = &at
}

// record appends the round r, done, to the history.
func (st *State) record(r Round) {
	r.Planned = nil
	if len(r.Pods) > 0 {
		if t := st.tracked(); t != nil {
			t.Unrecovered = true // a new round acted: its recovery no longer says anything of this one
		}
	}
	st.Rounds = max(st.Rounds, r.Round)
	st.History = append(st.History, r)
	if len(st.History) > historyLimit {
		st.History = st.History[len(st.History)-historyLimit:]
	}
}

// tracked is the round whose recovery is being measured: the last one that
// acted on pods, not recovered yet nor given up on.
func (st *State) tracked() *Round {
	for i := len(st.History) - 1; i >= 0; i-- {
		r := &st.History[i]
		if len(r.Pods) == 0 {
			continue
		}
		if r.RecoveredAt != nil || r.Unrecovered {
			return nil
		}
		return r
	}
	return nil
}

// last is the newest round done, or nil.
func (st *State) last() *Round {
	if len(st.History) == 0 || st.History[len(st.History)-1].Round != st.Rounds || st.Rounds == 0 {
		return nil
	}
	return &st.History[len(st.History)-1]
}

// over reports whether no round is left to start.
func (st *State) over(s Spec, now time.Time) bool {
	return st.Pending == nil && !st.due(s, now) && (st.NextRoundAt == nil || s.Duration > 0 && now.Sub(st.StartedAt.Time) >= s.Duration)
}

// phase says where the schedule is, and why.
func (st *State) phase(s Spec, now time.Time) (string, string) {
	last := st.last()
	switch {
	case st.Pending != nil:
		return PhaseRunning, fmt.Sprintf("Round %d is acting on %d pod(s)", st.Pending.Round, len(st.Pending.Planned))
	case last != nil && len(last.Refused) > 0:
		msg := fmt.Sprintf("Round %d acted on no pod: %s", last.Round, last.Refused[0])
		if st.over(s, now) {
			msg += "; the schedule is over"
		} else {
			msg += "; the next round tries again at its time"
		}
		return PhaseBlocked, msg
	case st.over(s, now) && st.tracked() == nil:
		return PhaseCompleted, fmt.Sprintf("%d round(s) done", st.Rounds)
	case st.tracked() != nil:
		return PhaseRunning, fmt.Sprintf("Round %d: waiting for every selected pod to be Ready again", st.tracked().Round)
	case st.NextRoundAt != nil:
		return PhaseRunning, fmt.Sprintf("%d round(s) done; the next at %s", st.Rounds, st.NextRoundAt.UTC().Format(time.RFC3339))
	}
	return PhaseRunning, fmt.Sprintf("%d round(s) done", st.Rounds)
}
