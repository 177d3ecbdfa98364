package bench

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMemoryConfig_Steps(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want []int
	}{
		{10000, []int{1000, 2500, 5000, 10000}},
		{20, []int{2, 5, 10, 20}},
		{4, []int{1, 2, 4}},
		{2, []int{1, 2}},
	} {
		if got := (memoryConfig{N: tt.n}).Steps(); !slices.Equal(got, tt.want) {
			t.Errorf("N=%d: steps %v, want %v", tt.n, got, tt.want)
		}
	}
}

func TestMemorySection_PerAdditionalWebApp(t *testing.T) {
	steps := []memoryStep{
		{WebApps: 1000, RSS: 100 * mib, PeakRSS: 120 * mib, Live: 30e6},
		{WebApps: 10000, RSS: 280 * mib, PeakRSS: 300 * mib, Live: 210e6},
	}
	out := memorySection(t.TempDir(), memoryConfig{N: 10000, Namespaces: 10, Image: "nginx:1.25"}, steps, time.Now())
	// (300-120) MiB over 9,000 WebApps is 20.48 KiB each; (210-30) MB is 20 KB.
	for _, want := range []string{"| 10000 |", "peak RSS 20.5 KiB (target ≤ 20 KiB ✗)", "live heap 20.0 KB"} {
		if !strings.Contains(out, want) {
			t.Errorf("section lacks %q:\n%s", want, out)
		}
	}
}
