//go:build bench

package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/rudder-operator/rudder/test/testenv"
)

// BenchmarkColumns runs every scenario for the columns of RUDDER_BENCH_COLUMNS
// (default floor, baseline and rudder) at RUDDER_BENCH_WEBAPPS WebApps
// (default 1000), prints the table and writes it into docs/benchmarks.md.
// No figure is asserted. `make bench` runs it once.
func BenchmarkColumns(b *testing.B) {
	cfg, err := configFromEnv()
	if err != nil {
		b.Fatal(err)
	}
	root, err := testenv.Root()
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		results, ran, err := runBench(context.Background(), cfg)
		out := section(root, ran, results, time.Now())
		fmt.Println(out)
		if err != nil {
			b.Fatal(err)
		}
		if len(ran.Columns) < len(allColumns) {
			// The table there sets the three side by side: a run of some
			// of them would replace it with less.
			fmt.Printf("bench: %s left as it is: only %v ran\n", benchmarksDoc, ran.Columns)
			continue
		}
		if err := writeDoc(filepath.Join(root, benchmarksDoc), benchMarkers, out); err != nil {
			b.Fatal(err)
		}
		fmt.Printf("bench: wrote the table into %s\n", benchmarksDoc)
	}
}

// BenchmarkShards installs RUDDER_BENCH_SHARD_WEBAPPS WebApps (default
// 10000) in RUDDER_BENCH_SHARD_NAMESPACES namespaces (default 60) under one
// manager, then under RUDDER_BENCH_SHARDS shards (default 3), prints the
// figures and writes them into docs/benchmarks.md in the section of the
// cluster's filtering mode. No figure is asserted. `make bench-shards` runs
// it once with the API server filtering and once without.
func BenchmarkShards(b *testing.B) {
	cfg, err := shardConfigFromEnv()
	if err != nil {
		b.Fatal(err)
	}
	root, err := testenv.Root()
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		results, err := runShardBench(context.Background(), cfg)
		out := shardSection(root, cfg, results, time.Now())
		fmt.Println(out)
		if err != nil {
			b.Fatal(err)
		}
		mode := results[len(results)-1].Mode
		if err := writeDoc(filepath.Join(root, benchmarksDoc), shardMarkers(mode), out); err != nil {
			b.Fatal(err)
		}
		fmt.Printf("bench-shards: wrote the mode %s section into %s\n", mode, benchmarksDoc)
	}
}

// BenchmarkMemory installs RUDDER_BENCH_MEMORY_WEBAPPS WebApps of one
// replica (default 10000) under one manager in steps, measures its resident
// memory and live heap after each, prints the figures per additional WebApp
// and writes them into docs/benchmarks.md. No figure is asserted.
// `make bench-memory` runs it once.
func BenchmarkMemory(b *testing.B) {
	cfg, err := memoryConfigFromEnv()
	if err != nil {
		b.Fatal(err)
	}
	root, err := testenv.Root()
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		steps, err := runMemoryBench(context.Background(), cfg)
		out := memorySection(root, cfg, steps, time.Now())
		fmt.Println(out)
		if err != nil {
			b.Fatal(err)
		}
		if err := writeDoc(filepath.Join(root, benchmarksDoc), memoryMarkers, out); err != nil {
			b.Fatal(err)
		}
		fmt.Printf("bench-memory: wrote the figures into %s\n", benchmarksDoc)
	}
}
