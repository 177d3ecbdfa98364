package watches_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/rudder-operator/rudder/internal/watches"
)

func TestLoad_Rollout(t *testing.T) {
	pct := func(n int) watches.Step { return watches.Step{N: n, Percent: true} }
	tests := []struct {
		name string
		yaml string // appended to webApp
		want watches.Rollout
	}{
		{name: "absent: the default", want: watches.DefaultRollout()},
		{
			name: "every field",
			yaml: "  rollout:\n    steps: [2, 5, \"25%\", \"100%\"]\n    failureBudget: 3\n    stepTimeout: 2m\n    soak: \"0\"\n" +
				"    canaries: {matchLabels: {tier: canary}}\n    onFailure: keep\n",
			want: watches.Rollout{
				Steps: []watches.Step{{N: 2}, {N: 5}, pct(25), pct(100)}, FailureBudget: 3, StepTimeout: 2 * time.Minute,
				Canaries: labels.SelectorFromSet(labels.Set{"tier": "canary"}), OnFailure: watches.AfterFailureKeep,
			},
		},
		{
			name: "all at once",
			yaml: "  rollout: {steps: [\"100%\"]}\n",
			want: func() watches.Rollout { r := watches.DefaultRollout(); r.Steps = []watches.Step{pct(100)}; return r }(),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := watches.Load(fsWith(webApp+tc.yaml), "watches.yaml")
			if err != nil {
				t.Fatal(err)
			}
			got := ws[0].Rollout
			if got.Canaries.String() != tc.want.Canaries.String() {
				t.Errorf("canaries: got %s, want %s", got.Canaries, tc.want.Canaries)
			}
			got.Canaries, tc.want.Canaries = nil, nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestLoad_RolloutErrors(t *testing.T) {
	tests := []struct {
		yaml  string
		field string
		want  string
	}{
		{"  rollout: {steps: [0, \"100%\"]}\n", "rollout.steps[0]", "0 is not a positive count"},
		{"  rollout: {steps: [\"10%\", \"5%\", \"100%\"]}\n", "rollout.steps[1]", "5% does not grow"},
		{"  rollout: {steps: [\"10%\", 3, \"100%\"]}\n", "rollout.steps[1]", "a count (3) after a percentage"},
		{"  rollout: {steps: [1, \"50%\"]}\n", "rollout.steps", `the last step is not "100%"`},
		{"  rollout: {steps: [\"150%\"]}\n", "rollout.steps[0]", `"150%" is not a percentage from 1% to 100%`},
		{"  rollout: {steps: [true]}\n", "rollout.steps[0]", "true is neither a count nor a percentage"},
		{"  rollout: {failureBudget: -1}\n", "rollout.failureBudget", "-1 is negative"},
		{"  rollout: {stepTimeout: \"0\"}\n", "rollout.stepTimeout", `"0" is not positive`},
		{"  rollout: {soak: soon}\n", "rollout.soak", `"soon" is not a duration`},
		{"  rollout: {onFailure: undo}\n", "rollout.onFailure", `"undo" is not one of rollback, keep`},
		{"  rollout: {canaries: {matchLabels: {\"a b\": x}}}\n", "rollout.canaries", "a b"},
	}
	for _, tc := range tests {
		t.Run(tc.field, func(t *testing.T) {
			_, err := watches.Load(fsWith(webApp+tc.yaml), "watches.yaml")
			if err == nil {
				t.Fatal("loaded")
			}
			if msg := err.Error(); !strings.Contains(msg, `field "`+tc.field+`"`) || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q: want field %q and %q", msg, tc.field, tc.want)
			}
		})
	}
}

func TestStep_Of(t *testing.T) {
	for _, tc := range []struct {
		step         watches.Step
		total, wantN int
	}{
		{watches.Step{N: 1}, 1000, 1},
		{watches.Step{N: 5}, 3, 3},
		{watches.Step{N: 10, Percent: true}, 1000, 100},
		{watches.Step{N: 10, Percent: true}, 5, 1}, // rounded up: a step never covers nothing
		{watches.Step{N: 100, Percent: true}, 7, 7},
		{watches.Step{N: 50, Percent: true}, 0, 0},
	} {
		if got := tc.step.Of(tc.total); got != tc.wantN {
			t.Errorf("%s of %d: got %d, want %d", tc.step, tc.total, got, tc.wantN)
		}
	}
}
