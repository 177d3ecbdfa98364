package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/rudder-operator/rudder/internal/shard"
)

// TestShardNamespaces_Even: the sharded bench's namespaces split evenly
// among the shards, whatever their number.
func TestShardNamespaces_Even(t *testing.T) {
	for _, tt := range []struct{ n, count, each int }{{60, 3, 20}, {6, 3, 2}, {8, 4, 2}} {
		got := make([]int, tt.count)
		for _, ns := range shardNamespaces("s", tt.n, tt.count) {
			got[shard.Of(ns, tt.count).Index]++
		}
		for i, n := range got {
			if n != tt.each {
				t.Errorf("%d namespaces, %d shards: shard %d owns %d (all: %v), want %d", tt.n, tt.count, i, n, got, tt.each)
			}
		}
	}
}

func TestShardSection(t *testing.T) {
	one := &shardResult{Name: "1 process", Wall: 100, Procs: []shardProcess{{Shard: "all", Namespaces: 6, WebApps: 30, CPU: 20, PeakRSS: 200 * mib, PeakHeap: 100 * mib, Own: 900}}}
	many := &shardResult{Name: "3 shards", Mode: "client", Wall: 80}
	for i := range 3 {
		many.Procs = append(many.Procs, shardProcess{Shard: shard.Shard{Index: i, Count: 3}.String(), Namespaces: 2, WebApps: 10,
			CPU: 8, PeakRSS: 100 * mib, PeakHeap: 40 * mib, Own: 300, Others: 600})
	}
	out := shardSection("/nonexistent", shardConfig{N: 30, Namespaces: 6, Shards: 3, Image: "nginx:1.25"}, []*shardResult{one, many}, time.Unix(0, 0))
	for _, want := range []string{
		"#### Mode client: the API server sends every shard everything",
		"| until every WebApp is Running (s) | 100 | 80.0 | 0.80× |",
		"| operator CPU, all processes (CPU-s) | 20.0 | 24.0 | 1.20× |",
		"| peak RSS, largest process (MiB) | 200 | 100 | 0.50× |",
		"| objects received, largest process | 900 | 900 | 1.00× |",
		"| 3 shards | 1-of-3 | 2 | 10 | 8.00 | 100 | 40.0 | 300 | 600 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}
