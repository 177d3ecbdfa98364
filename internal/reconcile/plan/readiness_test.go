package plan

import (
	"testing"
	"time"

	"github.com/rudder-operator/rudder/internal/stored"
)

// TestReadinessLeft: a revision has its kind's readiness timeout from its
// deploy, none when the kind sets no timeout or the deploy time is unknown,
// and never a negative time left.
func TestReadinessLeft(t *testing.T) {
	deployed := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		deployed time.Time
		timeout  time.Duration
		now      time.Time
		want     time.Duration
	}{
		{"within the timeout", deployed, 5 * time.Minute, deployed.Add(2 * time.Minute), 3 * time.Minute},
		{"at its end", deployed, 5 * time.Minute, deployed.Add(5 * time.Minute), 0},
		{"past it", deployed, 5 * time.Minute, deployed.Add(time.Hour), 0},
		{"no timeout", deployed, 0, deployed, 0},
		{"deploy time unknown", time.Time{}, 5 * time.Minute, deployed, 0},
	} {
		if got := ReadinessLeft(tc.deployed, tc.timeout, tc.now); got != tc.want {
			t.Errorf("%s: ReadinessLeft = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestUnderWay(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		rev  *stored.Revision
		want bool
	}{
		{"none", nil, false},
		{"pending, a minute old", &stored.Revision{Status: "pending-upgrade", Created: now.Add(-time.Minute)}, true},
		{"pending, older than any operation runs", &stored.Revision{Status: "pending-rollback", Created: now.Add(-ForeignOperationTimeout)}, false},
		{"deployed", &stored.Revision{Status: "deployed", Created: now}, false},
	}
	for _, tt := range tests {
		if got := UnderWay(tt.rev, now); got != tt.want {
			t.Errorf("%s: UnderWay = %v, want %v", tt.name, got, tt.want)
		}
	}
}
