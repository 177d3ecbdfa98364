package bench

import (
	"fmt"
	"runtime"
	"strings"
	"time"
)

// memoryMarkers are `make bench-memory`'s.
var memoryMarkers = markersOf("make bench-memory")

// memoryTarget is the bound on the peak anonymous resident memory each
// additional resource may add, in bytes.
const memoryTarget = 15 << 10

// memorySection is the generated text of a memory run: where it ran, the
// figures at each step, and what each WebApp past the first step added.
func memorySection(root string, cfg memoryConfig, steps []memoryStep, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d WebApps of 1 replica (%s) in %d namespaces, one manager; %d CPUs, %s memory, %s; %s, commit %s.\n\n",
		cfg.N, cfg.Image, cfg.Namespaces, runtime.NumCPU(), memTotal(), runtime.Version(),
		now.UTC().Format("2006-01-02 15:04 UTC"), commit(root))
	b.WriteString("| WebApps Running | installs of this step (s) | RSS (MiB) | peak RSS (MiB) | anonymous RSS (MiB) | peak anonymous RSS (MiB) | live heap after a collection (MB) | heap in use then (MiB) |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range steps {
		fmt.Fprintf(&b, "| %d | %.0f | %.0f | %.0f | %.0f | %.0f | %.1f | %.0f |\n",
			s.WebApps, s.Wall, s.RSS/mib, s.PeakRSS/mib, s.AnonRSS/mib, s.PeakAnonRSS/mib, s.Live/1e6, s.HeapInuse/mib)
	}
	if len(steps) >= 2 {
		first, last := steps[0], steps[len(steps)-1]
		per := func(v func(memoryStep) float64) float64 {
			return (v(last) - v(first)) / float64(last.WebApps-first.WebApps)
		}
		anon := per(func(s memoryStep) float64 { return s.PeakAnonRSS })
		met := "✓"
		if anon > memoryTarget {
			met = "✗"
		}
		fmt.Fprintf(&b, "\nPer additional WebApp, from %d to %d: peak anonymous RSS %.1f KiB (target ≤ %d KiB %s), peak RSS %.1f KiB, live heap %.1f KB.\n",
			first.WebApps, last.WebApps, anon/1024, memoryTarget>>10, met,
			per(func(s memoryStep) float64 { return s.PeakRSS })/1024, per(func(s memoryStep) float64 { return s.Live })/1e3)
	}
	return b.String()
}
