package rollout

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rudder-operator/rudder/internal/shard"
	"github.com/rudder-operator/rudder/internal/watches"
)

// Condition types of a ChartRollout.
const (
	ConditionProgressing = "Progressing"
	ConditionHalted      = "Halted"
)

// coordinator moves a rollout from the shards' tallies: the process that owns
// cluster-scoped objects runs it.
type coordinator struct {
	policy watches.Rollout
	shards int // how many shards there are: 1 when not sharded
	now    time.Time
}

// next returns cr's status once the shards' tallies in it are taken into
// account. It changes nothing but the coordinator's fields.
func (c coordinator) next(cr *ChartRollout) Status {
	st := cr.Status
	gen := cr.Generation
	resumed := st.ObservedGeneration != 0 && st.ObservedGeneration != gen
	st.ObservedGeneration = gen
	st.Steps = len(c.policy.Steps)
	if st.Step == 0 {
		st.Step = 1
		st.History = append(st.History, c.record(1))
	}
	shards := c.current(cr)
	st.Total, st.Updated, st.Ready, st.Failed, st.FailedResources = 0, 0, 0, 0, nil
	for _, s := range shards {
		st.Total, st.Updated, st.Ready, st.Failed = st.Total+s.Total, st.Updated+s.Updated, st.Ready+s.Ready, st.Failed+s.Failed
		for _, r := range s.FailedResources {
			if len(st.FailedResources) < MaxListed {
				st.FailedResources = append(st.FailedResources, r)
			}
		}
	}
	all := len(shards) == c.shards
	switch {
	case st.Phase == PhaseSuperseded:
	case cr.Spec.Undo:
		st.Phase = PhaseUndoing
		if all && every(shards, func(s ShardStatus) bool { return s.Undone }) {
			st.Phase = PhaseUndone
		}
	case st.Phase == PhaseHalted && !resumed:
	case st.Failed > c.policy.FailureBudget || slices.ContainsFunc(shards, func(s ShardStatus) bool { return s.Broken }):
		st.Phase = PhaseHalted
	case cr.Spec.Paused:
		st.Phase = PhasePaused
	case st.Phase == PhaseComplete:
	default:
		st.Phase = PhaseProgressing
		if all && every(shards, func(s ShardStatus) bool { return s.Step == st.Step && s.Done }) {
			st.History[len(st.History)-1].Completed = ptr(metav1.NewTime(c.now))
			if st.Step == st.Steps {
				st.Phase = PhaseComplete
			} else {
				st.Step++
				st.History = append(st.History, c.record(st.Step))
			}
		}
	}
	st.StepText = fmt.Sprintf("%d/%d (%s)", st.Step, st.Steps, c.size(st.Step))
	c.conditions(&st, gen)
	return st
}

// current returns the shards' tallies made for cr's generation.
func (c coordinator) current(cr *ChartRollout) []ShardStatus {
	var out []ShardStatus
	for _, s := range cr.Status.Shards {
		if s.Generation == cr.Generation && c.known(s.Shard) {
			out = append(out, s)
		}
	}
	return out
}

// known reports whether name is one of the shards rudder runs now.
func (c coordinator) known(name string) bool {
	if c.shards <= 1 {
		return name == shard.Shard{}.String()
	}
	for i := range c.shards {
		if name == (shard.Shard{Index: i, Count: c.shards}).String() {
			return true
		}
	}
	return false
}

func (c coordinator) size(step int) string {
	if step < 1 || step > len(c.policy.Steps) {
		return "?"
	}
	return c.policy.Steps[step-1].String()
}

func (c coordinator) record(step int) StepRecord {
	return StepRecord{Step: step, Size: c.size(step), Started: metav1.NewTime(c.now)}
}

// conditions sets Progressing and Halted from st's phase.
func (c coordinator) conditions(st *Status, gen int64) {
	set := func(typ string, ok bool, reason, msg string) {
		s := metav1.ConditionFalse
		if ok {
			s = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: s, Reason: reason, Message: msg,
			ObservedGeneration: gen, LastTransitionTime: metav1.NewTime(c.now)})
	}
	halted := st.Phase == PhaseHalted
	switch {
	case halted && st.Failed <= c.policy.FailureBudget:
		set(ConditionHalted, true, "ChartBroken", fmt.Sprintf(
			"the chart failed before anything was applied, for values the chart before it took (first: %s): no other resource moves; fix the chart, or `rudder rollout undo` takes the promoted back",
			firstFailure(*st)))
	case halted:
		set(ConditionHalted, true, "FailureBudgetExceeded", fmt.Sprintf(
			"%d resource(s) failed, more than rollout.failureBudget %d allows: no other resource moves; `rudder rollout resume` goes on with the budget whole again, `rudder rollout undo` takes the promoted back",
			st.Failed, c.policy.FailureBudget))
	default:
		set(ConditionHalted, false, st.Phase, "the failures are within rollout.failureBudget")
	}
	switch st.Phase {
	case PhaseProgressing:
		set(ConditionProgressing, true, "StepInProgress", fmt.Sprintf("step %s: %d of %d resources run the chart", st.StepText, st.Updated, st.Total))
	case PhaseUndoing:
		set(ConditionProgressing, true, "Undoing", "the resources promoted go back to the chart they had")
	default:
		set(ConditionProgressing, false, st.Phase, fmt.Sprintf("%s at step %s: %d of %d resources run the chart", st.Phase, st.StepText, st.Updated, st.Total))
	}
}

func every[T any](s []T, f func(T) bool) bool {
	return !slices.ContainsFunc(s, func(v T) bool { return !f(v) })
}

func ptr[T any](v T) *T { return &v }
