package bench

import (
	"fmt"
	"runtime"
	"strings"
	"time"
)

// shardMarkers are the markers of `make bench-shards`' section for a
// filtering mode: one section per mode, each kept when the other is run.
func shardMarkers(mode string) markers {
	return markersOf("make bench-shards, mode " + mode)
}

// modeText says who filters in a mode.
var modeText = map[string]string{
	"server": "the API server filters each shard's lists and watches (feature gate ShardedListAndWatch on)",
	"client": "the API server sends every shard everything and each drops the others' (feature gate off)",
}

// shardSection is the generated text of a sharded run: where and how it
// ran, the columns side by side, and each process.
func shardSection(root string, cfg shardConfig, results []*shardResult, now time.Time) string {
	var b strings.Builder
	mode := "unknown"
	if len(results) == 2 && results[1].Mode != "" {
		mode = results[1].Mode
	}
	fmt.Fprintf(&b, "#### Mode %s: %s\n\n", mode, modeText[mode])
	fmt.Fprintf(&b, "%d WebApps of 1 replica (%s) in %d namespaces; %d CPUs, %s memory, %s; %s, commit %s.\n\n",
		cfg.N, cfg.Image, cfg.Namespaces, runtime.NumCPU(), memTotal(), runtime.Version(), now.UTC().Format("2006-01-02 15:04 UTC"), commit(root))
	if len(results) == 2 {
		b.WriteString(shardSummary(results[0], results[1]))
		b.WriteString("\n")
	}
	b.WriteString(shardProcesses(results))
	return b.String()
}

// shardSummary sets the unsharded column beside the sharded one.
func shardSummary(one, many *shardResult) string {
	rows := []struct {
		name string
		of   func(*shardResult) float64
		unit string
	}{
		{"until every WebApp is Running", func(r *shardResult) float64 { return r.Wall }, "s"},
		{"operator CPU, all processes", (*shardResult).CPU, "CPU-s"},
		{"peak RSS, largest process", func(r *shardResult) float64 { return maxOf(r, func(p shardProcess) float64 { return p.PeakRSS }) / mib }, "MiB"},
		{"peak RSS, all processes", func(r *shardResult) float64 { return sumOf(r, func(p shardProcess) float64 { return p.PeakRSS }) / mib }, "MiB"},
		{"peak Go heap, largest process", func(r *shardResult) float64 {
			return maxOf(r, func(p shardProcess) float64 { return p.PeakHeap }) / mib
		}, "MiB"},
		{"objects received, largest process", func(r *shardResult) float64 {
			return maxOf(r, func(p shardProcess) float64 { return p.Own + p.Others })
		}, ""},
		{"objects received, all processes", func(r *shardResult) float64 {
			return sumOf(r, func(p shardProcess) float64 { return p.Own + p.Others })
		}, ""},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| | %s | %s | %s / %s |\n|---|---:|---:|---:|\n", one.Name, many.Name, many.Name, one.Name)
	for _, rw := range rows {
		a, m := rw.of(one), rw.of(many)
		name := rw.name
		if rw.unit != "" {
			name += " (" + rw.unit + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, figure(a), figure(m), formatRatio(ratio(m, a)))
	}
	return b.String()
}

// shardProcesses lists every process of every column.
func shardProcesses(results []*shardResult) string {
	var b strings.Builder
	b.WriteString("| column | process | namespaces | WebApps | CPU-s | peak RSS (MiB) | peak Go heap (MiB) | objects received: own | others' (dropped) |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		for _, p := range r.Procs {
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %s | %s | %s |\n", r.Name, p.Shard, p.Namespaces, p.WebApps,
				figure(p.CPU), figure(p.PeakRSS/mib), figure(p.PeakHeap/mib), figure(p.Own), figure(p.Others))
		}
	}
	return b.String()
}

const mib = 1 << 20

func maxOf(r *shardResult, f func(shardProcess) float64) float64 {
	var m float64
	for _, p := range r.Procs {
		m = max(m, f(p))
	}
	return m
}

func sumOf(r *shardResult, f func(shardProcess) float64) float64 {
	var t float64
	for _, p := range r.Procs {
		t += f(p)
	}
	return t
}

// figure prints v with three significant digits or so: 12345, 123, 12.3, 1.23.
func figure(v float64) string {
	switch {
	case v >= 100 || v == 0:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
