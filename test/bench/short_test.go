//go:build e2e

package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rudder-operator/rudder/internal/testenv"
)

// TestBenchShort runs the benchmark's scenarios for every column at 20
// WebApps with 5-second idle and churn phases, so that the benchmark cannot
// rot. It asserts only that every scenario converged in each column, never a
// time or any other figure.
func TestBenchShort(t *testing.T) {
	cfg, err := configFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	cfg.N, cfg.Replicas, cfg.Columns = 20, 2, allColumns
	cfg.Idle, cfg.Churn, cfg.ChurnEvery = 5*time.Second, 5*time.Second, 2*time.Second
	cfg.Quiet = 3 * time.Second
	root, err := testenv.Root()
	if err != nil {
		t.Fatal(err)
	}
	results, ran, err := runBench(context.Background(), cfg)
	fmt.Println(section(root, ran, results, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range allColumns {
		if results[c] == nil {
			t.Errorf("column %s has no results", c)
		}
	}
}
