package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rudder-operator/rudder"
	"github.com/rudder-operator/rudder/internal/watches"
)

// Environment that sets up a run; `make bench` passes it through.
const (
	envWebApps  = "RUDDER_BENCH_WEBAPPS"
	envReplicas = "RUDDER_BENCH_REPLICAS"
	envIdle     = "RUDDER_BENCH_IDLE_SECONDS"
	envChurn    = "RUDDER_BENCH_CHURN_SECONDS"
	envColumns  = "RUDDER_BENCH_COLUMNS"
	envManager  = "RUDDER_MANAGER_BIN"
	envBaseline = "RUDDER_BASELINE_BIN"
)

// config is what one run measures.
type config struct {
	// N is the number of WebApps. Default 1000.
	N int
	// Replicas of each WebApp. Default 2; at least 1, the WebApp CRD's minimum.
	Replicas int
	// Idle and Churn are how long the idle and churn scenarios last. Default 60 s each.
	Idle, Churn time.Duration
	// ChurnEvery is how often pods are deleted during churn; ChurnShare is the
	// share of the pods deleted each time, at most ChurnMax. Defaults 5 s, 5 %, 500.
	ChurnEvery time.Duration
	ChurnShare float64
	ChurnMax   int
	// Quiet is how long a restarted operator's CPU must stay under
	// QuietRate CPU-s per second to count as settled. Defaults 10 s, 0.05.
	Quiet     time.Duration
	QuietRate float64
	// Columns to run, in allColumns order. Default all three.
	Columns []string
	// Image is the WebApps' image; NewImage the one the change wave sets.
	Image, NewImage string
	// Workers is WebApp's maxConcurrentReconciles in watches.yaml: the
	// floor's apply goroutines and the baseline's workers.
	Workers int
}

// Images describes the change wave's images.
func (c config) Images() string { return c.Image + " → " + c.NewImage }

// timeout bounds one wait for convergence: generous, and growing with N.
func (c config) timeout() time.Duration {
	return 5*time.Minute + time.Duration(c.N)*2*time.Second
}

// configFromEnv reads the run's configuration from the environment, with
// the defaults of `make bench`.
func configFromEnv() (config, error) {
	cfg := config{
		N: 1000, Replicas: 2, Idle: time.Minute, ChurnEvery: 5 * time.Second, ChurnShare: 0.05, ChurnMax: 500,
		Quiet: 10 * time.Second, QuietRate: 0.05, Columns: allColumns,
		Image: "nginx:1.25", NewImage: "nginx:1.26",
	}
	var err error
	if cfg.N, err = envInt(envWebApps, cfg.N, 1); err != nil {
		return cfg, err
	}
	if cfg.Replicas, err = envInt(envReplicas, cfg.Replicas, 1); err != nil {
		return cfg, err
	}
	idle, err := envInt(envIdle, int(cfg.Idle.Seconds()), 1)
	if err != nil {
		return cfg, err
	}
	cfg.Idle = time.Duration(idle) * time.Second
	churn, err := envInt(envChurn, idle, 1)
	if err != nil {
		return cfg, err
	}
	cfg.Churn = time.Duration(churn) * time.Second
	if cfg.Columns, err = parseColumns(os.Getenv(envColumns)); err != nil {
		return cfg, err
	}
	cfg.Workers, err = webAppWorkers()
	return cfg, err
}

// envInt reads a whole number of at least min from name; def when unset.
func envInt(name string, def, minimum int) (int, error) {
	s := os.Getenv(name)
	if s == "" {
		return def, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < minimum {
		return 0, fmt.Errorf("%s=%q: want a whole number of at least %d", name, s, minimum)
	}
	return v, nil
}

// parseColumns reads a comma-separated list of column names; empty means
// all. The result is in allColumns order.
func parseColumns(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return allColumns, nil
	}
	want := map[string]bool{}
	for _, c := range strings.Split(s, ",") {
		c = strings.TrimSpace(c)
		known := false
		for _, k := range allColumns {
			known = known || c == k
		}
		if !known {
			return nil, fmt.Errorf("%s: unknown column %q (want some of %s)", envColumns, c, strings.Join(allColumns, ","))
		}
		want[c] = true
	}
	var out []string
	for _, k := range allColumns {
		if want[k] {
			out = append(out, k)
		}
	}
	return out, nil
}

// webAppWorkers is WebApp's maxConcurrentReconciles in the embedded watches.yaml.
func webAppWorkers() (int, error) {
	ws, err := watches.Load(rudder.Files, rudder.WatchesFile)
	if err != nil {
		return 0, fmt.Errorf("loading the embedded watches.yaml: %w", err)
	}
	for _, w := range ws {
		if w.GVK == rudderWebApp {
			return w.MaxConcurrentReconciles, nil
		}
	}
	return 0, fmt.Errorf("the embedded watches.yaml has no entry for %s", rudderWebApp)
}
