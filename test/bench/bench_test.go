//go:build bench

package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/rudder-operator/rudder/internal/testenv"
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
		if err := writeDoc(filepath.Join(root, benchmarksDoc), out); err != nil {
			b.Fatal(err)
		}
		fmt.Printf("bench: wrote the table into %s\n", benchmarksDoc)
	}
}
