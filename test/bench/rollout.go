package bench

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder"
	"github.com/rudder-operator/rudder/internal/rollout"
	"github.com/rudder-operator/rudder/internal/watches"
)

// rolloutSteps are the steps of the chart rollout scenario: rudder's default.
var rolloutSteps = []string{"1", "10%", "50%", "100%"}

// rolloutWatches is the watches file of the chart rollout scenario: WebApp
// as the embedded watches.yaml serves it, rolled out in the default steps
// with no soak.
const rolloutWatches = `- group: webapp.my.domain
  version: v1
  kind: WebApp
  chart: charts/webapp
  maxConcurrentReconciles: 16
  maxHistory: 10
  rollout:
    steps: [1, "10%%", "50%%", "100%%"]
    soak: "0"
    stepTimeout: %s
`

// changedChart writes into dir a watches file and the embedded WebApp
// chart with one change, an annotation on its pod template, and returns the
// watches file and the chart's digest.
func changedChart(dir string, stepTimeout time.Duration) (string, string, error) {
	sub, err := fs.Sub(rudder.Files, "charts/webapp")
	if err != nil {
		return "", "", err
	}
	chart := filepath.Join(dir, "charts", "webapp")
	if err := os.CopyFS(chart, sub); err != nil {
		return "", "", err
	}
	file := filepath.Join(chart, "templates", "deployment.yaml")
	b, err := os.ReadFile(file)
	if err != nil {
		return "", "", err
	}
	changed := strings.Replace(string(b), "  template:\n    metadata:\n", "  template:\n    metadata:\n      annotations:\n        rudder.dev/bench-chart: \"2\"\n", 1)
	if changed == string(b) {
		return "", "", fmt.Errorf("the WebApp chart's deployment.yaml has no pod template metadata to annotate")
	}
	if err := os.WriteFile(file, []byte(changed), 0o600); err != nil {
		return "", "", err
	}
	watchesFile := filepath.Join(dir, "watches.yaml")
	if err := os.WriteFile(watchesFile, fmt.Appendf(nil, rolloutWatches, stepTimeout), 0o600); err != nil {
		return "", "", err
	}
	ws, err := watches.LoadFile(watchesFile)
	if err != nil {
		return "", "", err
	}
	c, err := ws[0].LoadChart()
	if err != nil {
		return "", "", err
	}
	return watchesFile, ws[0].ChartDigest(c.Digest()), nil
}

// chartRollout restarts rudder with a changed WebApp chart and measures the
// rollout of it to the N WebApps, in the default steps with no soak, until
// the ChartRollout is Complete: its time, rudder's CPU and each step's time
// from the ChartRollout's status.
func (s *scenarioRun) chartRollout(ctx context.Context) error {
	op := s.col.op
	if op == nil || s.col.name != columnRudder {
		return nil
	}
	watchesFile, digest, err := changedChart(filepath.Join(op.logDir, "rollout"), s.cfg.timeout())
	if err != nil {
		return err
	}
	if err := op.stop(); err != nil {
		return err
	}
	op.extraArgs = []string{"--watches-file=" + watchesFile}
	name := rollout.Name(*s.col.gvk, digest, nil)
	var steps []float64
	s.res.Rollout, err = s.measure(ctx, "chart rollout", func(context.Context) error {
		return op.start(2 * time.Minute)
	}, func(ctx context.Context) (bool, string, error) {
		u := rollout.New()
		if err := s.c.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
			return false, "", client.IgnoreNotFound(err)
		}
		cr, err := rollout.FromUnstructured(u)
		if err != nil {
			return false, "", err
		}
		st := cr.Status
		steps = steps[:0]
		for _, h := range st.History {
			if h.Completed != nil {
				steps = append(steps, h.Completed.Sub(h.Started.Time).Seconds())
			}
		}
		return st.Phase == rollout.PhaseComplete, fmt.Sprintf("%s at step %s, %d of %d updated", st.Phase, st.StepText, st.Updated, st.Total), nil
	})
	s.res.RolloutSteps = steps
	s.logf("chart rollout: complete after %.1fs, %.1f CPU-s, steps %v s", s.res.Rollout.wall, s.res.Rollout.cpu, steps)
	return err
}
