//go:build bench || e2e

package bench

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// TestMain runs the floor's applier when this binary was started as one
// (floor.go); otherwise the tests. The bench's own clients log nothing
// (controller-runtime otherwise prints a stack trace the first time one is
// made without a logger).
func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	if os.Getenv(envFloorJob) != "" {
		os.Exit(floorMain())
	}
	os.Exit(m.Run())
}
