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
	tests := []struct {
		name  string
		steps []memoryStep
		want  []string
	}{
		{name: "anonymous RSS over the target",
			steps: []memoryStep{
				{WebApps: 1000, RSS: 100 * mib, PeakRSS: 120 * mib, AnonRSS: 50 * mib, PeakAnonRSS: 60 * mib, Live: 30e6},
				{WebApps: 10000, RSS: 280 * mib, PeakRSS: 300 * mib, AnonRSS: 180 * mib, PeakAnonRSS: 195 * mib, Live: 210e6},
			},
			// (195-60) MiB over 9,000 WebApps is 15.36 KiB each; (300-120)
			// MiB is 20.48 KiB; (210-30) MB is 20 KB.
			want: []string{"| 10000 | 0 | 280 | 300 | 180 | 195 | 210.0 | 0 |",
				"peak anonymous RSS 15.4 KiB (target ≤ 15 KiB ✗), peak RSS 20.5 KiB, live heap 20.0 KB"}},
		{name: "anonymous RSS within the target though peak RSS is over it",
			steps: []memoryStep{
				{WebApps: 1000, PeakRSS: 120 * mib, PeakAnonRSS: 60 * mib},
				{WebApps: 10000, PeakRSS: 300 * mib, PeakAnonRSS: 150 * mib},
			},
			// (150-60) MiB over 9,000 WebApps is 10.24 KiB each.
			want: []string{"peak anonymous RSS 10.2 KiB (target ≤ 15 KiB ✓), peak RSS 20.5 KiB"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := memorySection(t.TempDir(), memoryConfig{N: 10000, Namespaces: 10, Image: "nginx:1.25"}, tt.steps, time.Now())
			for _, want := range tt.want {
				if !strings.Contains(out, want) {
					t.Errorf("section lacks %q:\n%s", want, out)
				}
			}
		})
	}
}
