package rudder_test

import (
	"strings"
	"testing"

	"github.com/rudder-operator/rudder/internal/crdgen"
	"github.com/rudder-operator/rudder/internal/manager"
	"github.com/rudder-operator/rudder/internal/watches"
)

// TestManifests_UpToDate fails when config/crd/bases is not what watches.yaml
// and the charts generate, so that CI catches a chart changed without its CRD.
func TestManifests_UpToDate(t *testing.T) {
	ws, err := watches.LoadFile("watches.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hooks, err := manager.BuiltinHooks()
	if err != nil {
		t.Fatal(err)
	}
	gen := &crdgen.Generator{Hooks: hooks, Warn: func(msg string) { t.Log("warning:", msg) }}
	files, err := gen.Generate(ws)
	if err != nil {
		t.Fatal(err)
	}
	problems, err := crdgen.Check("config/crd/bases", files)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Errorf("config/crd/bases is stale; run make manifests:\n  %s", strings.Join(problems, "\n  "))
	}
}
