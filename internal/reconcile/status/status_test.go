package status

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/stored"
	"github.com/rudder-operator/rudder/internal/watches"
)

func TestCompute(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	want := plan.Digests{Values: "v", Chart: "c"}
	deployed := rev(2, "deployed", want)
	ready := &Health{Ready: true, Workloads: 1, WantReplicas: 3, Replicas: 3, ReadyReplicas: 3, Objects: 3}
	rolling := &Health{Workloads: 1, WantReplicas: 3, Replicas: 3, ReadyReplicas: 1, Message: "Deployment/x is not ready: 1/3"}
	tests := []struct {
		name       string
		o          Observation
		wantPhase  string
		wantMsg    string
		wantRel    metav1.ConditionStatus
		wantReady  metav1.ConditionStatus
		wantReason string // of Released
		// wantObserved is status.observedGeneration (and Ready's) when the
		// resource is at generation 7 and the status read says 5; 0 means 7.
		wantObserved int64
	}{
		{
			name:      "running",
			o:         Observation{Facts: plan.Facts{Want: want, Latest: deployed, Deployed: deployed}, Health: ready},
			wantPhase: PhaseRunning, wantMsg: "All replicas are ready",
			wantRel: metav1.ConditionTrue, wantReady: metav1.ConditionTrue, wantReason: ReasonUpgradeSucceeded,
		},
		{
			name:      "rolling out an upgrade",
			o:         Observation{Facts: plan.Facts{Want: want, Latest: deployed, Deployed: deployed}, Health: rolling},
			wantPhase: PhaseUpdating, wantMsg: "1/3 replicas ready",
			wantRel: metav1.ConditionTrue, wantReady: metav1.ConditionFalse, wantReason: ReasonUpgradeSucceeded,
		},
		{
			name:      "nothing installed yet",
			o:         Observation{Facts: plan.Facts{Want: want}},
			wantPhase: PhasePending, wantMsg: "Waiting for the release to be installed",
			wantRel: metav1.ConditionUnknown, wantReady: metav1.ConditionFalse, wantReason: ReasonNotReleased,
			wantObserved: 5,
		},
		{
			name: "paused with a spec change waiting: generation not claimed",
			o: Observation{Facts: plan.Facts{Paused: true, Want: plan.Digests{Values: "new", Chart: "c"}, Latest: deployed, Deployed: deployed},
				Health: ready},
			wantPhase: PhaseRunning, wantMsg: "All replicas are ready",
			wantRel: metav1.ConditionUnknown, wantReady: metav1.ConditionTrue, wantReason: "Paused",
			wantObserved: 5,
		},
		{
			name: "rolled back this reconcile: Ready waits for the new revision's objects",
			o: Observation{Facts: plan.Facts{Want: want, Latest: deployed, Deployed: deployed}, Health: ready,
				Outcome: &Outcome{Phase: PhaseUpdating, Reason: ReasonRolledBack, Message: "Rolled back to revision 1 as revision 3; checking its objects"}},
			wantPhase: PhaseUpdating, wantMsg: "Rolled back to revision 1 as revision 3; checking its objects",
			wantRel: metav1.ConditionUnknown, wantReady: metav1.ConditionFalse, wantReason: ReasonRolledBack,
		},
		{
			name: "upgrade failed, old revision still serving",
			o: Observation{Facts: plan.Facts{Want: plan.Digests{Values: "new", Chart: "c"}, Latest: deployed, Deployed: deployed}, Health: ready,
				Outcome: &Outcome{Phase: PhaseFailed, Reason: ReasonUpgradeFailed, Message: "boom", Failed: true}},
			wantPhase: PhaseFailed, wantMsg: "boom",
			wantRel: metav1.ConditionFalse, wantReady: metav1.ConditionTrue, wantReason: ReasonUpgradeFailed,
		},
		{
			name:      "values cannot be computed",
			o:         Observation{Facts: plan.Facts{Want: want, ValuesErr: errors.New("bad override")}},
			wantPhase: PhaseFailed, wantMsg: "Cannot compute the release values: bad override; fix the watch's overrideValues or the spec",
			wantRel: metav1.ConditionFalse, wantReady: metav1.ConditionFalse, wantReason: ReasonValuesInvalid,
		},
		{
			name: "retries exhausted",
			o: Observation{Facts: plan.Facts{Want: want, Failures: watches.DefaultMaxAttempts},
				Failure: Failure{Want: want, Count: watches.DefaultMaxAttempts, Message: "boom"}},
			wantPhase: PhaseFailed,
			wantMsg:   "Gave up after 3 failed tries with these values and this chart; change the spec to try again. Last error: boom",
			wantRel:   metav1.ConditionFalse, wantReady: metav1.ConditionFalse, wantReason: ReasonRetriesExhausted,
			wantObserved: 5, // the failed tries claimed it; a hold claims nothing
		},
		{
			name: "objects ready, a hook still at work",
			o: Observation{Facts: plan.Facts{Want: want, Latest: deployed, Deployed: deployed}, Health: ready,
				Hooks: []HookRun{
					{Hook: fakeHook("BackedUp"), Result: hook.Result{Condition: metav1.Condition{
						Status: metav1.ConditionFalse, Reason: "BackupFailed", Message: "informs only"}}},
					{Hook: fakeHook("Restored"), Result: hook.Result{BlocksReady: true, Condition: metav1.Condition{
						Status: metav1.ConditionFalse, Reason: "Restoring", Message: "restoring latest dump"}}},
				}},
			wantPhase: PhaseDeploying, wantMsg: "Restored is False: restoring latest dump",
			wantRel: metav1.ConditionTrue, wantReady: metav1.ConditionFalse, wantReason: ReasonUpgradeSucceeded,
		},
		{
			name:      "being deleted: the deployed revision's objects are not read",
			o:         Observation{Facts: plan.Facts{Want: want, Latest: deployed, Deployed: deployed, Deleting: true}},
			wantPhase: PhaseUpdating, wantMsg: "The resource is being deleted: its release is uninstalled",
			wantRel: metav1.ConditionTrue, wantReady: metav1.ConditionFalse, wantReason: ReasonUpgradeSucceeded,
		},
		{
			name: "failed revision found in storage after a restart",
			o: Observation{Facts: plan.Facts{Want: want, Latest: rev(1, "failed", want)},
				Latest: &Revision{Release: &helm.Release{Description: "Release \"x\" failed: quota exceeded"}}},
			wantPhase: PhaseFailed, wantMsg: "Release \"x\" failed: quota exceeded",
			wantRel: metav1.ConditionFalse, wantReady: metav1.ConditionFalse, wantReason: ReasonInstallFailed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.o
			if o.Facts.Remediation.MaxAttempts == 0 {
				o.Facts.Remediation.MaxAttempts = watches.DefaultMaxAttempts
			}
			o.Resource = &unstructured.Unstructured{Object: map[string]any{}}
			o.Resource.SetGeneration(7)
			st := Compute(&o, Status{ObservedGeneration: 5}, now)
			if st.Phase != tt.wantPhase || st.Message != tt.wantMsg {
				t.Errorf("phase, message = %s, %q; want %s, %q", st.Phase, st.Message, tt.wantPhase, tt.wantMsg)
			}
			observed := tt.wantObserved
			if observed == 0 {
				observed = 7
			}
			if st.ObservedGeneration != observed {
				t.Errorf("observedGeneration = %d, want %d", st.ObservedGeneration, observed)
			}
			for _, typ := range []string{ConditionReleased, ConditionReady} {
				if meta.FindStatusCondition(st.Conditions, typ) == nil {
					t.Errorf("no %s condition in %+v", typ, st.Conditions)
				}
			}
			for _, c := range st.Conditions {
				wantGen := int64(7)
				if c.Type == ConditionReady {
					wantGen = observed
				}
				if c.ObservedGeneration != wantGen || !c.LastTransitionTime.Time.Equal(now) {
					t.Errorf("%s: observedGeneration %d (want %d), time %v", c.Type, c.ObservedGeneration, wantGen, c.LastTransitionTime)
				}
				switch c.Type {
				case ConditionReleased:
					if c.Status != tt.wantRel || c.Reason != tt.wantReason {
						t.Errorf("Released = %s/%s, want %s/%s", c.Status, c.Reason, tt.wantRel, tt.wantReason)
					}
				case ConditionReady:
					if c.Status != tt.wantReady {
						t.Errorf("Ready = %s (%s), want %s", c.Status, c.Message, tt.wantReady)
					}
				}
			}
		})
	}
}

func TestCompute_KeepsTransitionTimeWhenUnchanged(t *testing.T) {
	earlier := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	prev := []metav1.Condition{{Type: ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonReady, LastTransitionTime: earlier}}
	d := rev(1, "deployed", plan.Digests{})
	o := &Observation{Resource: &unstructured.Unstructured{Object: map[string]any{}}, Facts: plan.Facts{Latest: d, Deployed: d},
		Health: &Health{Ready: true, Objects: 1}}
	st := Compute(o, Status{Conditions: prev}, earlier.Add(time.Hour))
	found := false
	for _, c := range st.Conditions {
		if c.Type == ConditionReady {
			found = true
			if !c.LastTransitionTime.Equal(&earlier) {
				t.Errorf("Ready transition time moved to %v", c.LastTransitionTime)
			}
		}
	}
	if !found {
		t.Errorf("no Ready condition in %+v", st.Conditions)
	}
}

// fakeHook is a hook that owns condition type string(f) and does nothing.
type fakeHook string

func (f fakeHook) Name() string      { return strings.ToLower(string(f)) }
func (f fakeHook) Condition() string { return string(f) }
func (fakeHook) Reconcile(context.Context, *unstructured.Unstructured, map[string]any) (hook.Result, error) {
	return hook.Result{}, nil
}
func (fakeHook) Finalize(context.Context, *unstructured.Unstructured) error { return nil }

func TestFitConditions(t *testing.T) {
	long := strings.Repeat("ü", maxConditionMessage+1)
	exact := strings.Repeat("ü", maxConditionMessage)
	tests := []struct {
		name string
		msg  any
		want any
	}{
		{name: "short", msg: "Revision 2 is deployed", want: "Revision 2 is deployed"},
		{name: "at the limit", msg: exact, want: exact},
		{name: "over the limit", msg: long,
			want: strings.Repeat("ü", maxConditionMessage-utf8.RuneCountInString(cutMark)) + cutMark},
		{name: "no message", msg: nil, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cond := map[string]any{"type": "Released", "message": tt.msg}
			if tt.msg == nil {
				delete(cond, "message")
			}
			list := []any{cond}
			st := map[string]any{"conditions": list}
			FitConditions(st)
			got := st["conditions"].([]any)[0].(map[string]any)["message"]
			if got != tt.want {
				t.Errorf("message %.40q... (%d characters), want %.40q...", got, utf8.RuneCountInString(fmt.Sprint(got)), tt.want)
			}
			if cond["message"] != tt.msg && tt.msg != nil {
				t.Error("the condition read was changed in place")
			}
			if s, ok := got.(string); ok && (!utf8.ValidString(s) || utf8.RuneCountInString(s) > maxConditionMessage) {
				t.Errorf("message is not valid UTF-8 of at most %d characters", maxConditionMessage)
			}
		})
	}
}

// rev is revision n of a release in status, made by rudder from digests d.
func rev(n int, status string, d plan.Digests) *stored.Revision {
	return &stored.Revision{Number: n, Status: status, UID: types.UID(fmt.Sprint("uid-", n)), Signed: true, Labels: map[string]string{
		stored.LabelValuesDigest: d.Values, stored.LabelChartDigest: d.Chart, stored.LabelRevision: strconv.Itoa(n),
	}}
}
