//go:build bench || e2e

package bench

import (
	"os"
	"testing"
)

// TestMain runs the floor's applier when this binary was started as one
// (floor.go); otherwise the tests.
func TestMain(m *testing.M) {
	if os.Getenv(envFloorJob) != "" {
		os.Exit(floorMain())
	}
	os.Exit(m.Run())
}
