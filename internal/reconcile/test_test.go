package reconcile

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/rudder-operator/rudder/internal/reconcile/status"

	"k8s.io/apimachinery/pkg/types"

	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/storage"
	"github.com/rudder-operator/rudder/internal/watches"
)

// TestTestsFailed: only a failed run of the revision rudder made for the
// wanted spec counts, and only when the kind's test.enable is set without
// ignoreFailures.
func TestTestsFailed(t *testing.T) {
	v1 := plan.Digests{Values: "v1", Chart: "c1"}
	v2 := plan.Digests{Values: "v2", Chart: "c1"}
	tested := func(r *storage.Revision, result string) *storage.Revision {
		r.Labels[storage.LabelTest] = result
		return r
	}
	on := watches.Test{Enable: true}
	tests := []struct {
		name string
		f    plan.Facts
		t    watches.Test
		want bool
	}{
		{"failed, enabled", plan.Facts{Want: v1, Deployed: tested(rev(1, "deployed", v1), status.TestFailed)}, on, true},
		{"passed, enabled", plan.Facts{Want: v1, Deployed: tested(rev(1, "deployed", v1), status.TestPassed)}, on, false},
		{"not tested yet", plan.Facts{Want: v1, Deployed: rev(1, "deployed", v1)}, on, false},
		{"failed, tests run on request only", plan.Facts{Want: v1, Deployed: tested(rev(1, "deployed", v1), status.TestFailed)}, watches.Test{}, false},
		{"failed, ignoreFailures", plan.Facts{Want: v1, Deployed: tested(rev(1, "deployed", v1), status.TestFailed)}, watches.Test{Enable: true, IgnoreFailures: true}, false},
		{"failed, but the spec changed since", plan.Facts{Want: v2, Deployed: tested(rev(1, "deployed", v1), status.TestFailed)}, on, false},
		{"nothing deployed", plan.Facts{Want: v1}, on, false},
	}
	for _, tt := range tests {
		if got := testsFailed(tt.f, tt.t); got != tt.want {
			t.Errorf("%s: testsFailed = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// rev is revision n of a release in status, made by rudder from digests d.
func rev(n int, status string, d plan.Digests) *storage.Revision {
	return &storage.Revision{Number: n, Status: status, UID: types.UID(fmt.Sprint("uid-", n)), Labels: map[string]string{
		storage.LabelValuesDigest: d.Values, storage.LabelChartDigest: d.Chart, storage.LabelRevision: strconv.Itoa(n),
	}}
}
