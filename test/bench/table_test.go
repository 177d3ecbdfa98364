package bench

import (
	"strings"
	"testing"
)

// lineOf returns the table line of the row labeled label.
func lineOf(t *testing.T, table, label string) string {
	t.Helper()
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "| "+label+" |") {
			return line
		}
	}
	t.Fatalf("no row %q in\n%s", label, table)
	return ""
}

func TestFormatTable(t *testing.T) {
	floor := newResult(1000)
	floor.Cold.wall, floor.Cold.cpu, floor.PeakRSS, floor.PeakAnonRSS = 100, 20, 50<<20, 40<<20
	floor.Requests = counts{"PATCH": 2000}
	baseline := newResult(1000)
	baseline.Cold.wall, baseline.Cold.cpu, baseline.IdleCPUPerMin, baseline.PeakRSS, baseline.PeakAnonRSS = 120, 140, 68, 200<<20, 160<<20
	baseline.RestartRequests = counts{"GET": 50, "PATCH": 1000}
	baseline.Requests = counts{"GET": 3000, "PATCH": 5000}
	rudder := newResult(1000)
	rudder.Cold.wall, rudder.Cold.cpu, rudder.IdleCPUPerMin, rudder.PeakRSS, rudder.PeakAnonRSS = 105, 30, 0.4, 120<<20, 90<<20
	rudder.RestartRequests = counts{"GET": 40, "PATCH": 2000}
	decodes, dryRuns := 1000.0, 2000.0
	rudder.RestartDecodes, rudder.RestartDryRuns = &decodes, &dryRuns
	rudder.Requests = counts{"GET": 1000, "PATCH": 2000}

	tests := []struct {
		name    string
		results map[string]*result
		label   string
		want    string
	}{
		{name: "seconds with both ratios, target met",
			results: map[string]*result{columnFloor: floor, columnBaseline: baseline, columnRudder: rudder},
			label:   "cold install: time until all Ready (s)",
			want:    "| cold install: time until all Ready (s) | 100.0 | 120.0 | 105.0 | 0.88× | 1.05× | ≤ 1.1× floor ✓ |"},
		{name: "CPU target against baseline",
			results: map[string]*result{columnFloor: floor, columnBaseline: baseline, columnRudder: rudder},
			label:   "cold install: CPU until all Ready (CPU-s)",
			want:    "| cold install: CPU until all Ready (CPU-s) | 20.0 | 140.0 | 30.0 | 0.21× | 1.50× | ≤ ¼ baseline ✓ |"},
		{name: "figure the floor does not have",
			results: map[string]*result{columnFloor: floor, columnBaseline: baseline, columnRudder: rudder},
			label:   "idle: CPU per minute (CPU-s)",
			want:    "| idle: CPU per minute (CPU-s) | — | 68.00 | 0.40 | 0.01× | — | ≤ 0.5 at N=1000 ✓ |"},
		{name: "figure without a target",
			results: map[string]*result{columnFloor: floor, columnBaseline: baseline, columnRudder: rudder},
			label:   "peak RSS (MiB)",
			want:    "| peak RSS (MiB) | 50 | 200 | 120 | 0.60× | 2.40× |  |"},
		{name: "absolute target missed",
			results: map[string]*result{columnFloor: floor, columnBaseline: baseline, columnRudder: rudder},
			label:   "peak anonymous RSS (MiB)",
			want:    "| peak anonymous RSS (MiB) | 40 | 160 | 90 | 0.56× | 2.25× | ≤ 80 at N=1000 ✗ |"},
		{name: "writes during restart, dry runs apart",
			results: map[string]*result{columnFloor: floor, columnBaseline: baseline, columnRudder: rudder},
			label:   "restart: API writes (POST/PUT/PATCH/DELETE, dry runs apart)",
			want:    "| restart: API writes (POST/PUT/PATCH/DELETE, dry runs apart) | — | 1000 | 0 | 0.00× | — | 0 when nothing changed ✓ |"},
		{name: "dry runs per resource; n/a without the metric",
			results: map[string]*result{columnFloor: floor, columnBaseline: baseline, columnRudder: rudder},
			label:   "restart: drift comparisons (server-side dry runs) per resource",
			want:    "| restart: drift comparisons (server-side dry runs) per resource | n/a | n/a | 2.00 | — | — |  |"},
		{name: "decodes per resource; n/a without the metric",
			results: map[string]*result{columnFloor: floor, columnBaseline: baseline, columnRudder: rudder},
			label:   "restart: stored-release decodes per resource",
			want:    "| restart: stored-release decodes per resource | n/a | n/a | 1.00 | — | — | ≤ 1 ✓ |"},
		{name: "requests per resource",
			results: map[string]*result{columnFloor: floor, columnBaseline: baseline, columnRudder: rudder},
			label:   "API requests per resource, scenarios 1–3: all",
			want:    "| API requests per resource, scenarios 1–3: all | 2.0 | 8.0 | 3.0 | 0.38× | 1.50× | ≤ 10 ✓ |"},
		{name: "only rudder ran",
			results: map[string]*result{columnRudder: rudder},
			label:   "cold install: time until all Ready (s)",
			want:    "| cold install: time until all Ready (s) | — | — | 105.0 | — | — | ≤ 1.1× floor |"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lineOf(t, formatTable(tt.results), tt.label); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestFormatTable_TargetAtOtherN(t *testing.T) {
	r := newResult(100)
	r.PeakAnonRSS = 100 << 20
	got := lineOf(t, formatTable(map[string]*result{columnRudder: r}), "peak anonymous RSS (MiB)")
	if want := "| peak anonymous RSS (MiB) | — | — | 100 | — | — | ≤ 80 at N=1000 |"; got != want {
		t.Errorf("a target stated for N=1000 was judged at N=100:\ngot  %s\nwant %s", got, want)
	}
}

func TestFormatTable_EveryRowHasEveryCell(t *testing.T) {
	table := formatTable(map[string]*result{columnRudder: newResult(10)})
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != len(rows)+2 {
		t.Fatalf("got %d lines, want a header, a rule and %d rows", len(lines), len(rows))
	}
	for _, line := range lines {
		if cells := strings.Count(line, "|"); cells != 8 {
			t.Errorf("line has %d separators, want 8: %s", cells, line)
		}
	}
}

// The profile prints one row per step, verb and resource, the most frequent
// first, per resource, with the rare ones summed into one row.
func TestFormatProfile(t *testing.T) {
	r := &result{N: 100, Profile: map[string]counts{
		"cold install": {"helm create secrets": 100, "status patch webapps/status": 100, "other get leases": 0.5},
		"change wave":  {"helm create secrets": 100, "status patch webapps/status": 200},
		"delete all":   {"uninstall delete secrets": 200},
	}}
	got := formatProfile(r)
	for _, want := range []string{
		"| status | patch | webapps/status | 1.00 | 0.00 | 2.00 | 3.00 | 0.00 | 0.00 |",
		"| helm | create | secrets | 1.00 | 0.00 | 1.00 | 2.00 | 0.00 | 0.00 |",
		"| uninstall | delete | secrets | 0.00 | 0.00 | 0.00 | 0.00 | 0.00 | 2.00 |",
		"| the rest |  | each under 0.01 | 0.01 | 0.00 | 0.00 | 0.01 | 0.00 | 0.00 |",
		"| **all** |  |  | 2.00 | 0.00 | 3.00 | 5.00 | 0.00 | 2.00 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("profile lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "| status |") > strings.Index(got, "| helm |") {
		t.Errorf("rows not the most frequent first:\n%s", got)
	}
	if formatProfile(&result{N: 1}) != "" {
		t.Error("a result without a profile printed one")
	}
}
