//go:build e2e

package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rudder-operator/rudder/test/testenv"
)

// TestBenchShort runs the benchmark's scenarios for every column at 20
// WebApps with 5-second idle and churn phases, so that the benchmark cannot
// rot. It asserts only that every scenario converged in each column and its
// memory was read, never a time or any other figure.
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
		switch r := results[c]; {
		case r == nil:
			t.Errorf("column %s has no results", c)
		case !(r.PeakRSS > 0 && r.PeakAnonRSS > 0):
			t.Errorf("column %s: peak RSS %v, peak anonymous RSS %v: a figure was not read", c, r.PeakRSS, r.PeakAnonRSS)
		}
	}
}

// TestBenchShardsShort runs the sharded benchmark at 30 WebApps in 6
// namespaces, asserting only that both columns converged and that every
// shard received objects of its own, so that it cannot rot.
func TestBenchShardsShort(t *testing.T) {
	cfg := shardConfig{N: 30, Namespaces: 6, Shards: 3, Image: "nginx:1.25"}
	root, err := testenv.Root()
	if err != nil {
		t.Fatal(err)
	}
	results, err := runShardBench(context.Background(), cfg)
	fmt.Println(shardSection(root, cfg, results, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 || len(results[1].Procs) != cfg.Shards {
		t.Fatalf("want 2 columns, the second of %d processes; got %d columns", cfg.Shards, len(results))
	}
	for _, p := range results[1].Procs {
		if p.Own == 0 {
			t.Errorf("shard %s received nothing of its own", p.Shard)
		}
	}
}

// TestBenchMemoryShort runs the memory benchmark at 20 WebApps in 2
// namespaces, asserting only that every step was measured, so that it
// cannot rot.
func TestBenchMemoryShort(t *testing.T) {
	cfg := memoryConfig{N: 20, Namespaces: 2, Image: "nginx:1.25", Quiet: 3 * time.Second}
	root, err := testenv.Root()
	if err != nil {
		t.Fatal(err)
	}
	steps, err := runMemoryBench(context.Background(), cfg)
	fmt.Println(memorySection(root, cfg, steps, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != len(cfg.Steps()) {
		t.Fatalf("measured %d steps, want %d", len(steps), len(cfg.Steps()))
	}
	for _, s := range steps {
		if s.PeakRSS == 0 || s.PeakAnonRSS == 0 || s.Live == 0 {
			t.Errorf("step %d: peak RSS %v, peak anonymous RSS %v, live heap %v: a figure was not read",
				s.WebApps, s.PeakRSS, s.PeakAnonRSS, s.Live)
		}
	}
}
