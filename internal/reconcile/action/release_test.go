package action

import (
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/stored"
)

func TestFailureReason(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "deployments"}, "web", errors.New("no"))
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"not signed", fmt.Errorf("rollback: %w", helm.ErrNotSigned), status.ReasonRevisionNotSigned},
		{"outside the namespace", fmt.Errorf("render: %w", helm.ErrOutsideNamespace), status.ReasonOutsideNamespace},
		{"cluster-scoped", fmt.Errorf("render: %w", helm.ErrClusterScopedNotAllowed), status.ReasonClusterScopedNotAllowed},
		{"not owned", fmt.Errorf("upgrade: %w", helm.ErrNotOwned), status.ReasonObjectNotOwned},
		{"forbidden", forbidden, status.ReasonForbidden},
		{"forbidden, joined into a string by Helm", errors.New(`create: deployments.apps "web" is forbidden: User "system:serviceaccount:ns:sa" cannot create`), status.ReasonForbidden},
		{"anything else", errors.New("timed out"), status.ReasonUpgradeFailed},
	}
	for _, tt := range tests {
		if got := FailureReason(tt.err, status.ReasonUpgradeFailed); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// The labels of a new revision name its digests, its holder and its number,
// and clear what must not pass from the revision before it.
func TestLabels(t *testing.T) {
	now := time.Date(2026, 12, 5, 6, 0, 0, 0, time.UTC)
	w := Writer{Holder: "rudder-a", Clock: clocktesting.NewFakePassiveClock(now)}
	want := plan.Digests{Values: "v", Chart: "c"}
	first := &Release{Observation: &status.Observation{Facts: plan.Facts{Want: want}}}
	got := labels(w, first, nil)
	if got[stored.LabelRevision] != "1" || got[stored.LabelHolder] != "rudder-a" || got[stored.LabelValuesDigest] != "v" ||
		got[stored.LabelChartDigest] != "c" || got[stored.LabelWrittenAt] != fmt.Sprint(now.Unix()) {
		t.Errorf("first revision's labels: %v", got)
	}
	next := &Release{Observation: &status.Observation{Facts: plan.Facts{Want: want, Latest: &stored.Revision{Number: 4}, Stored: 4}}}
	got = labels(w, next, []string{stored.LabelRollbackTo})
	if got[stored.LabelRevision] != "5" || got[stored.LabelRollbackTo] != "null" {
		t.Errorf("labels after revision 4, clearing %s: %v", stored.LabelRollbackTo, got)
	}
	// A revision rudder did not sign is numbered past too: it is stored.
	past := &Release{Observation: &status.Observation{Facts: plan.Facts{Want: want, Latest: &stored.Revision{Number: 4}, Stored: 7}}}
	if got = labels(w, past, nil); got[stored.LabelRevision] != "8" {
		t.Errorf("labels after revision 4 and an unsigned revision 7: %v", got)
	}
}
