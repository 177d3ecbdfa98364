package rollout

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/rudder-operator/rudder/internal/shard"
	"github.com/rudder-operator/rudder/internal/watches"
)

func members(n int, chart string) []Member {
	out := make([]Member, n)
	for i := range out {
		out[i] = Member{Key: types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("r%d", i)}, Rank: Rank(types.UID(fmt.Sprintf("uid-%d", i))), Chart: chart}
	}
	return out
}

func promotedCount(tl tally) int {
	n := 0
	for _, p := range tl.promoted {
		if p {
			n++
		}
	}
	return n
}

func TestShare(t *testing.T) {
	pct := func(n int) watches.Step { return watches.Step{N: n, Percent: true} }
	for _, tc := range []struct {
		step  watches.Step
		shard shard.Shard
		total int
		want  int
	}{
		{watches.Step{N: 1}, shard.Shard{}, 100, 1},
		{watches.Step{N: 1}, shard.Shard{Index: 0, Count: 3}, 100, 1},
		{watches.Step{N: 1}, shard.Shard{Index: 1, Count: 3}, 100, 0},
		{watches.Step{N: 4}, shard.Shard{Index: 0, Count: 3}, 100, 2},
		{watches.Step{N: 4}, shard.Shard{Index: 2, Count: 3}, 100, 1},
		{pct(10), shard.Shard{Index: 1, Count: 3}, 35, 4},
		{pct(100), shard.Shard{}, 7, 7},
	} {
		if got := share(tc.step, tc.shard, tc.total); got != tc.want {
			t.Errorf("share(%s, %s, %d) = %d, want %d", tc.step, tc.shard, tc.total, got, tc.want)
		}
	}
}

func TestOrder_CanariesFirstAndStable(t *testing.T) {
	ms := members(20, "old")
	ms[13].Canary = true
	ms[7].Canary = true
	order(ms)
	if !ms[0].Canary || !ms[1].Canary || ms[2].Canary {
		t.Fatalf("canaries are not first: %+v", ms[:3])
	}
	again := members(20, "old")
	again[13].Canary, again[7].Canary = true, true
	for i, j := 0, len(again)-1; i < j; i, j = i+1, j-1 {
		again[i], again[j] = again[j], again[i]
	}
	order(again)
	for i := range ms {
		if ms[i].Key != again[i].Key {
			t.Fatalf("order depends on the input's: %v against %v at %d", ms[i].Key, again[i].Key, i)
		}
	}
}

func TestCount_StepsGateOnReadinessAndSoak(t *testing.T) {
	now := time.Unix(1000, 0)
	policy := watches.Rollout{Steps: []watches.Step{{N: 1}, {N: 50, Percent: true}, {N: 100, Percent: true}},
		StepTimeout: time.Minute, Soak: 30 * time.Second, OnFailure: watches.AfterFailureRollback}
	v := view{policy: policy, target: "new", phase: PhaseProgressing, step: 1, now: now}
	ms := members(10, "old")
	order(ms)
	tm := newTimers(1)

	tl := v.count(ms, tm)
	if promotedCount(tl) != 1 || !tl.promoted[ms[0].Key] || tl.status.Done {
		t.Fatalf("step 1: %d promoted (first %v), done %v", promotedCount(tl), tl.promoted[ms[0].Key], tl.status.Done)
	}
	ms[0].Chart, ms[0].Ready = "new", true
	if tl = v.count(ms, tm); tl.status.Done || tl.status.Updated != 1 || tl.status.Ready != 1 {
		t.Fatalf("done before the soak: %+v", tl.status)
	}
	v.now = now.Add(30 * time.Second)
	if tl = v.count(ms, tm); !tl.status.Done {
		t.Fatalf("not done once soaked: %+v", tl.status)
	}

	v.step = 2
	tl = v.count(ms, tm)
	if promotedCount(tl) != 5 || tl.status.Done {
		t.Fatalf("step 2: %d promoted, done %v", promotedCount(tl), tl.status.Done)
	}
	// One of step 2 fails its upgrade, one is never Ready: both fail.
	ms[1].Failure = &Resource{Namespace: "ns", Name: ms[1].Key.Name, Reason: "UpgradeFailed"}
	ms[2].Chart = "new"
	for _, i := range []int{3, 4} {
		ms[i].Chart, ms[i].Ready = "new", true
	}
	v.count(ms, tm)
	v.now = v.now.Add(time.Minute)
	tl = v.count(ms, tm)
	if tl.status.Failed != 2 || len(tl.status.FailedResources) != 2 {
		t.Fatalf("failed: %+v", tl.status)
	}

	// Halted: no other resource moves, and the failed one on the chart goes back.
	v.phase = PhaseHalted
	tl = v.count(ms, tm)
	if !tl.promoted[ms[0].Key] || !tl.promoted[ms[3].Key] || tl.promoted[ms[2].Key] || tl.promoted[ms[5].Key] || tl.promoted[ms[1].Key] {
		t.Errorf("halted: promoted %v", tl.promoted)
	}

	// Undo: every one goes back, but one installed with the chart.
	ms[4].Installed = true
	v.phase = PhaseUndoing
	if tl = v.count(ms, tm); promotedCount(tl) != 0 || tl.status.Undone {
		t.Errorf("undoing: %d promoted, undone %v", promotedCount(tl), tl.status.Undone)
	}
	ms[0].Chart, ms[2].Chart, ms[3].Chart = "old", "old", "old"
	if tl = v.count(ms, tm); !tl.status.Undone {
		t.Errorf("not undone with only an installed one on the chart: %+v", tl.status)
	}
}

func TestCount_InstalledWithTheChartIsNotGated(t *testing.T) {
	created := time.Unix(1000, 0)
	policy := watches.Rollout{Steps: []watches.Step{{N: 1}, {N: 100, Percent: true}}, StepTimeout: time.Second, Soak: time.Hour}
	v := view{policy: policy, target: "new", phase: PhaseProgressing, step: 1, created: created, now: created.Add(time.Hour)}
	ms := members(3, "new")
	for i := range ms {
		ms[i].Deployed, ms[i].Installed = created.Add(time.Minute), true // a fleet installed after the rollout began
	}
	if tl := v.count(ms, newTimers(1)); !tl.status.Done || tl.status.Failed != 0 {
		t.Errorf("a fleet installed with the chart: %+v", tl.status)
	}
}

func TestCount_OnTheChartBeforeTheRolloutIsNotGated(t *testing.T) {
	created := time.Unix(1000, 0)
	policy := watches.Rollout{Steps: []watches.Step{{N: 100, Percent: true}}, StepTimeout: time.Second, Soak: time.Hour}
	v := view{policy: policy, target: "new", phase: PhaseProgressing, step: 1, created: created, now: created.Add(time.Hour)}
	ms := members(3, "new")
	for i := range ms {
		ms[i].Deployed = created.Add(-time.Minute) // not Ready, and long before: a tenant's own trouble
	}
	if tl := v.count(ms, newTimers(1)); !tl.status.Done || tl.status.Failed != 0 {
		t.Errorf("a fleet already on the chart: %+v", tl.status)
	}
}

func TestCoordinator(t *testing.T) {
	now := time.Unix(5000, 0)
	policy := watches.Rollout{Steps: []watches.Step{{N: 1}, {N: 100, Percent: true}}, FailureBudget: 1}
	c := coordinator{policy: policy, shards: 2, now: now}
	cr := &ChartRollout{}
	cr.Generation = 1
	st := c.next(cr)
	if st.Phase != PhaseProgressing || st.Step != 1 || st.StepText != "1/2 (1)" || len(st.History) != 1 {
		t.Fatalf("first: %+v", st)
	}
	cr.Status = st
	row := func(s shard.Shard, done bool, failed int) ShardStatus {
		return ShardStatus{Shard: s.String(), Generation: 1, Step: 1, Done: done, Total: 5, Updated: 1, Failed: failed}
	}
	s0, s1 := shard.Shard{Index: 0, Count: 2}, shard.Shard{Index: 1, Count: 2}
	cr.Status.Shards = []ShardStatus{row(s0, true, 0)}
	if st = c.next(cr); st.Step != 1 {
		t.Fatalf("moved on without shard 1: %+v", st)
	}
	cr.Status.Shards = append(cr.Status.Shards, row(s1, true, 1))
	if st = c.next(cr); st.Step != 2 || st.Total != 10 || st.Failed != 1 || st.History[0].Completed == nil {
		t.Fatalf("within the budget, both done: %+v", st)
	}
	cr.Status = st
	cr.Status.Shards = []ShardStatus{row(s0, false, 1), row(s1, false, 1)}
	cr.Status.Shards[0].Step, cr.Status.Shards[1].Step = 2, 2
	if st = c.next(cr); st.Phase != PhaseHalted {
		t.Fatalf("past the budget: %+v", st)
	}
	cr.Status = st
	cr.Status.Shards[0].Done, cr.Status.Shards[1].Done, cr.Status.Shards[0].Failed = true, true, 0
	if st = c.next(cr); st.Phase != PhaseHalted {
		t.Fatalf("a halt is kept until a resume: %+v", st)
	}
	cr.Generation = 2 // resumed: the shards count again
	if st = c.next(cr); st.Phase != PhaseProgressing || st.Failed != 0 {
		t.Fatalf("resumed: %+v", st)
	}
	cr.Status = st
	cr.Status.Shards = []ShardStatus{row(s0, true, 0), row(s1, true, 0)}
	for i := range cr.Status.Shards {
		cr.Status.Shards[i].Generation, cr.Status.Shards[i].Step = 2, 2
	}
	if st = c.next(cr); st.Phase != PhaseComplete {
		t.Fatalf("last step done: %+v", st)
	}
	cr.Spec.Undo, cr.Generation = true, 3
	cr.Status = st
	if st = c.next(cr); st.Phase != PhaseUndoing {
		t.Fatalf("undo: %+v", st)
	}
}
