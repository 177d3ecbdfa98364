package chaos

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// view is what one look at the selected pods found.
type view struct {
	ready    []corev1.Pod // Ready and not being deleted
	notReady int          // present but not Ready, or being deleted
	uids     map[types.UID]*corev1.Pod
}

// observe sorts pods, the selected pods of the namespace.
func observe(pods []corev1.Pod) view {
	v := view{uids: make(map[types.UID]*corev1.Pod, len(pods))}
	for i := range pods {
		p := &pods[i]
		v.uids[p.UID] = p
		if isReady(p) {
			v.ready = append(v.ready, *p)
		} else {
			v.notReady++
		}
	}
	return v
}

// isReady reports whether p is Ready and not being deleted.
func isReady(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// unavailable is how many selected pods count against maxUnavailable: those
// not Ready, or, while a round's recovery is measured, as many as are
// missing from the Ready pods it started with (a deleted pod whose
// replacement is not created yet), whichever is more.
func (st *State) unavailable(v view) int {
	n := v.notReady
	if t := st.tracked(); t != nil {
		n = max(n, t.ReadyBefore-len(v.ready))
	}
	return n
}

// plan plans round number st.Rounds+1 at now: up to perRound pods picked at
// random (shuffle) among the Ready ones, no more than keep the unavailable
// ones at or under MaxUnavailable. A round that can act on none says why in
// Skipped.
func plan(s Spec, st *State, v view, now time.Time, shuffle func(n int, swap func(i, j int))) Round {
	r := Round{Round: st.Rounds + 1, At: metav1.NewMicroTime(now), Action: s.Action, ReadyBefore: len(v.ready)}
	budget := s.MaxUnavailable - st.unavailable(v)
	n := min(s.perRound(len(v.ready)+v.notReady), budget, len(v.ready))
	switch {
	case len(v.ready) == 0:
		r.Skipped = "no selected pod is Ready"
	case budget <= 0:
		r.Skipped = fmt.Sprintf("the budget is spent: %d selected pod(s) not Ready, maxUnavailable %d", st.unavailable(v), s.MaxUnavailable)
	}
	if n <= 0 {
		return r
	}
	pods := append([]corev1.Pod(nil), v.ready...)
	shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
	for _, p := range pods[:n] {
		r.Planned = append(r.Planned, PodRef{Name: p.Name, UID: p.UID})
	}
	return r
}

// toAct splits the pending round p's pods, as v sees them now: done are gone
// or being deleted (acted on by an earlier try that was cut short), act are
// still Ready and fit the budget. The rest are left alone.
func toAct(s Spec, p *Round, v view) (done []string, act []PodRef) {
	planned := make(map[types.UID]bool, len(p.Planned))
	for _, ref := range p.Planned {
		planned[ref.UID] = true
	}
	others := 0 // not Ready pods that are not the round's
	for uid, pod := range v.uids {
		if !planned[uid] && !isReady(pod) {
			others++
		}
	}
	var ready []PodRef
	for _, ref := range p.Planned {
		pod, ok := v.uids[ref.UID]
		switch {
		case !ok || pod.DeletionTimestamp != nil:
			done = append(done, ref.Name)
		case isReady(pod):
			ready = append(ready, ref)
		}
	}
	n := max(0, min(len(ready), s.MaxUnavailable-others-len(done)))
	return done, ready[:n]
}

// track measures the recovery of the tracked round as v sees the pods at
// now: recovered when every selected pod is Ready and at least as many as
// before the round. A round not recovered within the interval is Late; one
// still not recovered an interval after the schedule ended is given up on.
func (st *State) track(s Spec, v view, now time.Time) {
	t := st.tracked()
	if t == nil {
		return
	}
	took := now.Sub(t.At.Time)
	switch {
	case v.notReady == 0 && len(v.ready) >= t.ReadyBefore:
		at := metav1.NewMicroTime(now)
		t.RecoveredAt, t.Recovery = &at, roundDuration(took).String()
		st.LastRecovery = t.Recovery
		if slowest, err := time.ParseDuration(st.SlowestRecovery); err != nil || took > slowest {
			st.SlowestRecovery = t.Recovery
		}
	case st.over(s, now) && took >= s.Interval:
		t.Unrecovered = true
	}
	if (took > s.Interval || t.Unrecovered) && !t.Late {
		t.Late = true
		st.LateRecoveries++
	}
}

// roundDuration rounds d to what a poll can tell apart.
func roundDuration(d time.Duration) time.Duration {
	return d.Round(10 * time.Millisecond)
}
