package chaos

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Reasons of the Recovered condition.
const (
	ReasonRecovered       = "RecoveredInTime"
	ReasonRecoveryTooSlow = "RecoveryTooSlow"
	ReasonNoRoundYet      = "NoRoundYet"
	ReasonRecovering      = "Recovering"
)

// recoveryPoll is how often the hook looks at the pods while a round's
// recovery is measured: the resolution of the recovery times it reports.
const recoveryPoll = 250 * time.Millisecond

// actNow is how soon the reconcile that acts on a round follows the one that
// wrote it ahead.
const actNow = 10 * time.Millisecond

// condition says whether the pods came back within the interval each time.
func (st *State) condition(s Spec) metav1.Condition {
	recovered := 0
	for _, r := range st.History {
		if r.RecoveredAt != nil {
			recovered++
		}
	}
	switch {
	case st.LateRecoveries > 0:
		return metav1.Condition{Status: metav1.ConditionFalse, Reason: ReasonRecoveryTooSlow, Message: fmt.Sprintf(
			"The selected pods were not all Ready again within the interval (%s) after %d round(s)", s.Interval, st.LateRecoveries)}
	case recovered > 0:
		return metav1.Condition{Status: metav1.ConditionTrue, Reason: ReasonRecovered, Message: fmt.Sprintf(
			"After every round the selected pods were all Ready again within the interval (%s); the slowest took %s", s.Interval, st.SlowestRecovery)}
	case st.tracked() != nil:
		return metav1.Condition{Status: metav1.ConditionUnknown, Reason: ReasonRecovering, Message: fmt.Sprintf(
			"Round %d: waiting for every selected pod to be Ready again", st.tracked().Round)}
	}
	return metav1.Condition{Status: metav1.ConditionUnknown, Reason: ReasonNoRoundYet, Message: "No round has acted on a pod yet"}
}

// requeueAfter is when the hook must look again: right away to act on a
// round written ahead, every recoveryPoll while a recovery is measured, else
// at the next round's time; 0 when the schedule is over.
func (st *State) requeueAfter(now time.Time) time.Duration {
	switch {
	case st.Pending != nil:
		return actNow
	case st.tracked() != nil:
		return recoveryPoll
	case st.NextRoundAt != nil:
		return max(actNow, st.NextRoundAt.Sub(now))
	}
	return 0
}
