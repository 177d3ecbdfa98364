package plan

import (
	"testing"
	"time"
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
