package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rudder-operator/rudder/internal/reconcile/status"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/watches"
)

func TestComputeStatus(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	want := plan.Digests{Values: "v", Chart: "c"}
	deployed := rev(2, "deployed", want)
	ready := &health{ready: true, workloads: 1, wantReplicas: 3, replicas: 3, readyReplicas: 3, objects: 3}
	rolling := &health{workloads: 1, wantReplicas: 3, replicas: 3, readyReplicas: 1, message: "Deployment/x is not ready: 1/3"}
	tests := []struct {
		name       string
		o          observation
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
			o:         observation{facts: plan.Facts{Want: want, Latest: deployed, Deployed: deployed}, health: ready},
			wantPhase: status.PhaseRunning, wantMsg: "All replicas are ready",
			wantRel: metav1.ConditionTrue, wantReady: metav1.ConditionTrue, wantReason: status.ReasonUpgradeSucceeded,
		},
		{
			name:      "rolling out an upgrade",
			o:         observation{facts: plan.Facts{Want: want, Latest: deployed, Deployed: deployed}, health: rolling},
			wantPhase: status.PhaseUpdating, wantMsg: "1/3 replicas ready",
			wantRel: metav1.ConditionTrue, wantReady: metav1.ConditionFalse, wantReason: status.ReasonUpgradeSucceeded,
		},
		{
			name:      "nothing installed yet",
			o:         observation{facts: plan.Facts{Want: want}},
			wantPhase: status.PhasePending, wantMsg: "Waiting for the release to be installed",
			wantRel: metav1.ConditionUnknown, wantReady: metav1.ConditionFalse, wantReason: status.ReasonNotReleased,
			wantObserved: 5,
		},
		{
			name: "paused with a spec change waiting: generation not claimed",
			o: observation{facts: plan.Facts{Paused: true, Want: plan.Digests{Values: "new", Chart: "c"}, Latest: deployed, Deployed: deployed},
				health: ready},
			wantPhase: status.PhaseRunning, wantMsg: "All replicas are ready",
			wantRel: metav1.ConditionUnknown, wantReady: metav1.ConditionTrue, wantReason: "Paused",
			wantObserved: 5,
		},
		{
			name: "rolled back this reconcile: Ready waits for the new revision's objects",
			o: observation{facts: plan.Facts{Want: want, Latest: deployed, Deployed: deployed}, health: ready,
				outcome: &outcome{phase: status.PhaseUpdating, reason: status.ReasonRolledBack, message: "Rolled back to revision 1 as revision 3; checking its objects"}},
			wantPhase: status.PhaseUpdating, wantMsg: "Rolled back to revision 1 as revision 3; checking its objects",
			wantRel: metav1.ConditionUnknown, wantReady: metav1.ConditionFalse, wantReason: status.ReasonRolledBack,
		},
		{
			name: "upgrade failed, old revision still serving",
			o: observation{facts: plan.Facts{Want: plan.Digests{Values: "new", Chart: "c"}, Latest: deployed, Deployed: deployed}, health: ready,
				outcome: &outcome{phase: status.PhaseFailed, reason: status.ReasonUpgradeFailed, message: "boom", failed: true}},
			wantPhase: status.PhaseFailed, wantMsg: "boom",
			wantRel: metav1.ConditionFalse, wantReady: metav1.ConditionTrue, wantReason: status.ReasonUpgradeFailed,
		},
		{
			name:      "values cannot be computed",
			o:         observation{facts: plan.Facts{Want: want, ValuesErr: errors.New("bad override")}},
			wantPhase: status.PhaseFailed, wantMsg: "Cannot compute the release values: bad override; fix the watch's overrideValues or the spec",
			wantRel: metav1.ConditionFalse, wantReady: metav1.ConditionFalse, wantReason: status.ReasonValuesInvalid,
		},
		{
			name: "retries exhausted",
			o: observation{facts: plan.Facts{Want: want, Failures: watches.DefaultMaxAttempts},
				failure: failure{want: want, count: watches.DefaultMaxAttempts, message: "boom"}},
			wantPhase: status.PhaseFailed,
			wantMsg:   "Gave up after 3 failed tries with these values and this chart; change the spec to try again. Last error: boom",
			wantRel:   metav1.ConditionFalse, wantReady: metav1.ConditionFalse, wantReason: status.ReasonRetriesExhausted,
			wantObserved: 5, // the failed tries claimed it; a hold claims nothing
		},
		{
			name: "objects ready, a hook still at work",
			o: observation{facts: plan.Facts{Want: want, Latest: deployed, Deployed: deployed}, health: ready,
				hooks: []hookRun{
					{hook: fakeHook("BackedUp"), res: hook.Result{Condition: metav1.Condition{
						Status: metav1.ConditionFalse, Reason: "BackupFailed", Message: "informs only"}}},
					{hook: fakeHook("Restored"), res: hook.Result{BlocksReady: true, Condition: metav1.Condition{
						Status: metav1.ConditionFalse, Reason: "Restoring", Message: "restoring latest dump"}}},
				}},
			wantPhase: status.PhaseDeploying, wantMsg: "Restored is False: restoring latest dump",
			wantRel: metav1.ConditionTrue, wantReady: metav1.ConditionFalse, wantReason: status.ReasonUpgradeSucceeded,
		},
		{
			name:      "being deleted: the deployed revision's objects are not read",
			o:         observation{facts: plan.Facts{Want: want, Latest: deployed, Deployed: deployed, Deleting: true}},
			wantPhase: status.PhaseUpdating, wantMsg: "The resource is being deleted: its release is uninstalled",
			wantRel: metav1.ConditionTrue, wantReady: metav1.ConditionFalse, wantReason: status.ReasonUpgradeSucceeded,
		},
		{
			name: "failed revision found in storage after a restart",
			o: observation{facts: plan.Facts{Want: want, Latest: rev(1, "failed", want)},
				latest: &revision{Release: &helm.Release{Description: "Release \"x\" failed: quota exceeded"}}},
			wantPhase: status.PhaseFailed, wantMsg: "Release \"x\" failed: quota exceeded",
			wantRel: metav1.ConditionFalse, wantReady: metav1.ConditionFalse, wantReason: status.ReasonInstallFailed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.o
			if o.facts.Remediation.MaxAttempts == 0 {
				o.facts.Remediation.MaxAttempts = watches.DefaultMaxAttempts
			}
			o.obj = &unstructured.Unstructured{Object: map[string]any{}}
			o.obj.SetGeneration(7)
			st := computeStatus(&o, status.Status{ObservedGeneration: 5}, now)
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
			for _, typ := range []string{status.ConditionReleased, status.ConditionReady} {
				if meta.FindStatusCondition(st.Conditions, typ) == nil {
					t.Errorf("no %s condition in %+v", typ, st.Conditions)
				}
			}
			for _, c := range st.Conditions {
				wantGen := int64(7)
				if c.Type == status.ConditionReady {
					wantGen = observed
				}
				if c.ObservedGeneration != wantGen || !c.LastTransitionTime.Time.Equal(now) {
					t.Errorf("%s: observedGeneration %d (want %d), time %v", c.Type, c.ObservedGeneration, wantGen, c.LastTransitionTime)
				}
				switch c.Type {
				case status.ConditionReleased:
					if c.Status != tt.wantRel || c.Reason != tt.wantReason {
						t.Errorf("Released = %s/%s, want %s/%s", c.Status, c.Reason, tt.wantRel, tt.wantReason)
					}
				case status.ConditionReady:
					if c.Status != tt.wantReady {
						t.Errorf("Ready = %s (%s), want %s", c.Status, c.Message, tt.wantReady)
					}
				}
			}
		})
	}
}

func TestComputeStatus_KeepsTransitionTimeWhenUnchanged(t *testing.T) {
	earlier := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	prev := []metav1.Condition{{Type: status.ConditionReady, Status: metav1.ConditionTrue, Reason: status.ReasonReady, LastTransitionTime: earlier}}
	d := rev(1, "deployed", plan.Digests{})
	o := &observation{obj: &unstructured.Unstructured{Object: map[string]any{}}, facts: plan.Facts{Latest: d, Deployed: d},
		health: &health{ready: true, objects: 1}}
	st := computeStatus(o, status.Status{Conditions: prev}, earlier.Add(time.Hour))
	found := false
	for _, c := range st.Conditions {
		if c.Type == status.ConditionReady {
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
			fitConditions(st)
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
