package plan

import (
	"testing"

	"github.com/rudder-operator/rudder/internal/stored"
	"github.com/rudder-operator/rudder/internal/watches"
)

// TestTestsFailed: only a failed run of the revision rudder made for the
// wanted spec counts, and only when the kind's test.enable is set without
// ignoreFailures.
func TestTestsFailed(t *testing.T) {
	v1 := Digests{Values: "v1", Chart: "c1"}
	v2 := Digests{Values: "v2", Chart: "c1"}
	tested := func(r *stored.Revision, result string) *stored.Revision {
		r.Labels[stored.LabelTest] = result
		return r
	}
	on := watches.Test{Enable: true}
	tests := []struct {
		name string
		f    Facts
		t    watches.Test
		want bool
	}{
		{"failed, enabled", Facts{Want: v1, Deployed: tested(rev(1, "deployed", v1), stored.TestFailed)}, on, true},
		{"passed, enabled", Facts{Want: v1, Deployed: tested(rev(1, "deployed", v1), stored.TestPassed)}, on, false},
		{"not tested yet", Facts{Want: v1, Deployed: rev(1, "deployed", v1)}, on, false},
		{"failed, tests run on request only", Facts{Want: v1, Deployed: tested(rev(1, "deployed", v1), stored.TestFailed)}, watches.Test{}, false},
		{"failed, ignoreFailures", Facts{Want: v1, Deployed: tested(rev(1, "deployed", v1), stored.TestFailed)}, watches.Test{Enable: true, IgnoreFailures: true}, false},
		{"failed, but the spec changed since", Facts{Want: v2, Deployed: tested(rev(1, "deployed", v1), stored.TestFailed)}, on, false},
		{"nothing deployed", Facts{Want: v1}, on, false},
	}
	for _, tt := range tests {
		if got := TestsFailed(tt.f, tt.t); got != tt.want {
			t.Errorf("%s: TestsFailed = %v, want %v", tt.name, got, tt.want)
		}
	}
}
