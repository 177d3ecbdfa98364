package rollout

import (
	"cmp"
	"hash/fnv"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/rudder-operator/rudder/internal/shard"
	"github.com/rudder-operator/rudder/internal/watches"
)

// Member is one resource of the kind, as the reconciler last saw it.
type Member struct {
	Key    types.NamespacedName
	Rank   uint64 // Rank of its UID: its place among the others
	Canary bool   // its labels match the kind's rollout.canaries
	// Chart is the chart digest of its deployed revision; "" when none is.
	Chart string
	// Ready is its Ready condition as the reconciler last wrote it.
	Ready bool
	// Failure is set when the reconciler gave up on the rollout's chart for
	// it: as many failed tries as remediation.maxAttempts allows.
	Failure *Resource
	// Installed says it has run no other chart than Chart, which an undo
	// then leaves it on.
	Installed bool
	// Deployed is when its deployed revision was written.
	Deployed time.Time
	// Skip leaves it out of the rollout: paused, or its values or account
	// are invalid, it cannot move.
	Skip bool
	// Broken says its upgrade to the rollout's chart failed before anything
	// was stored (the chart did not render, or its schema or rudder's scope
	// refused it) for the values its chart before rendered: the chart is
	// broken, whatever the budget. Failure is set too.
	Broken bool
}

// Rank is a hash of a resource's UID, which orders it among the others: it
// spreads each step over namespaces and does not change while the resource
// lives.
func Rank(uid types.UID) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(uid))
	return h.Sum64()
}

// order sorts members in the order a rollout promotes them: canaries first,
// then by Rank.
func order(members []Member) {
	slices.SortFunc(members, func(a, b Member) int {
		if a.Canary != b.Canary {
			if a.Canary {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.Rank, b.Rank), cmp.Compare(a.Key.Namespace, b.Key.Namespace), cmp.Compare(a.Key.Name, b.Key.Name))
	})
}

// share is how many of a shard's total resources step covers: a percentage
// of them, or the shard's part of a count, which is split over the shards
// by index (a count of 1 over 3 shards is shard 0's).
func share(step watches.Step, s shard.Shard, total int) int {
	if step.Percent || !s.Sharded() {
		return step.Of(total)
	}
	n := step.N / s.Count
	if s.Index < step.N%s.Count {
		n++
	}
	return min(n, total)
}

// tally is a shard's view of the current step: which members it promotes,
// and how far they got.
type tally struct {
	promoted map[types.NamespacedName]bool
	status   ShardStatus
}

// timers are what a shard remembers of each member for the rollout's current
// generation, to tell a member that soaked from one that timed out.
type timers struct {
	generation int64
	promoted   map[types.NamespacedName]time.Time // first seen promoted and not on the chart
	ready      map[types.NamespacedName]time.Time // first seen Ready on the chart
	failed     map[types.NamespacedName]Resource  // failed: kept until the generation changes (resume)
	broken     bool                               // a failure said the chart is broken (Member.Broken)
}

func newTimers(generation int64) *timers {
	return &timers{generation: generation, promoted: map[types.NamespacedName]time.Time{},
		ready: map[types.NamespacedName]time.Time{}, failed: map[types.NamespacedName]Resource{}}
}

// view is what a shard computes its tally from.
type view struct {
	policy  watches.Rollout
	shard   shard.Shard
	target  string // the chart digest rolled out
	phase   string
	step    int       // from 1
	created time.Time // the ChartRollout's: a member on the chart deployed before it, or installed with it, is not gated
	now     time.Time
}

// count computes the shard's tally of members (ordered), updating t.
func (v view) count(members []Member, t *timers) tally {
	tl := tally{promoted: map[types.NamespacedName]bool{}, status: ShardStatus{Shard: v.shard.String(), Step: v.step, Total: len(members)}}
	gate := 0
	if v.step >= 1 && v.step <= len(v.policy.Steps) {
		gate = share(v.policy.Steps[v.step-1], v.shard, len(members))
	}
	done, undone := true, true
	for i, m := range members {
		on := m.Chart == v.target
		// Not part of the rollout: a resource that ran the chart before it
		// began, or that never ran another (installed with it).
		before := on && (m.Installed || !m.Deployed.IsZero() && m.Deployed.Before(v.created))
		if !before {
			v.failure(m, on, i < gate, t)
		}
		_, failed := t.failed[m.Key]
		tl.promoted[m.Key] = false // PhaseUndoing, PhaseUndone: each goes back to the chart it had
		switch v.phase {
		case PhaseComplete:
			tl.promoted[m.Key] = true
		case PhaseProgressing:
			tl.promoted[m.Key] = on || i < gate
		case PhasePaused, PhaseSuperseded, "":
			tl.promoted[m.Key] = on
		case PhaseHalted:
			tl.promoted[m.Key] = on && (!failed || v.policy.OnFailure != watches.AfterFailureRollback)
		}
		if on {
			tl.status.Updated++
			if m.Ready {
				tl.status.Ready++
			}
		}
		undone = undone && (!on || m.Installed)
		if i < gate && !failed && !before {
			soaked := on && m.Ready && !t.ready[m.Key].IsZero() && v.now.Sub(t.ready[m.Key]) >= v.policy.Soak
			done = done && soaked
		}
	}
	tl.status.Failed = len(t.failed)
	tl.status.Broken = t.broken
	tl.status.Done = done
	tl.status.Undone = undone
	for _, key := range sortedKeys(t.failed) {
		if len(tl.status.FailedResources) == MaxListed {
			break
		}
		tl.status.FailedResources = append(tl.status.FailedResources, t.failed[key])
	}
	return tl
}

// failure updates t for member m: on says it runs the chart, gated that the
// current step covers it. A member fails when the reconciler gave up on the
// chart for it, or when it is not Ready on the chart within stepTimeout of
// its promotion.
func (v view) failure(m Member, on, gated bool, t *timers) {
	if _, failed := t.failed[m.Key]; failed {
		return
	}
	if m.Failure != nil && (on || gated) {
		t.failed[m.Key] = *m.Failure
		if m.Broken {
			t.broken = true
		}
		return
	}
	if on && m.Ready {
		if t.ready[m.Key].IsZero() {
			t.ready[m.Key] = v.now
		}
		delete(t.promoted, m.Key)
		return
	}
	delete(t.ready, m.Key)
	if v.phase != PhaseProgressing || !on && !gated {
		return
	}
	since, seen := t.promoted[m.Key]
	if !seen {
		since = v.now
		t.promoted[m.Key] = since
	}
	if v.now.Sub(since) >= v.policy.StepTimeout {
		t.failed[m.Key] = Resource{Namespace: m.Key.Namespace, Name: m.Key.Name, Reason: "NotReadyInTime",
			Message: "not Ready on the chart within rollout.stepTimeout (" + v.policy.StepTimeout.String() + ")"}
	}
}

func sortedKeys[V any](m map[types.NamespacedName]V) []types.NamespacedName {
	keys := make([]types.NamespacedName, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b types.NamespacedName) int { return cmp.Compare(a.String(), b.String()) })
	return keys
}
