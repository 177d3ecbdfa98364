package bench

import (
	"fmt"
	"math"
	"strings"
)

// row is one figure of the table: how to read it from a column's result and
// print it, and the target rudder is held to, if any.
type row struct {
	label string
	// format prints a value, e.g. "%.1f".
	format string
	// get reads the figure; NaN when the column does not have it.
	get func(*result) float64
	// missing is printed for NaN; "—" when empty.
	missing string
	// target is rudder's target for this figure; nil when it has none.
	target *target
}

// target is a goal rudder's figure is compared with. It is printed, never
// asserted.
type target struct {
	text string
	// met reports whether rudder's figure (v) meets the target, given its
	// ratios to baseline and floor; known is false when a figure it needs is
	// missing.
	met func(v, perBaseline, perFloor float64) (ok, known bool)
	// atN, when set, is the only number of WebApps the target is stated for;
	// at any other N it is printed without ✓ or ✗.
	atN int
}

// at restricts t to runs of n WebApps.
func (t *target) at(n int) *target {
	t.atN = n
	return t
}

// atMost is the target "v ≤ limit".
func atMost(text string, limit float64) *target {
	return &target{text: text, met: func(v, _, _ float64) (bool, bool) {
		return v <= limit, !math.IsNaN(v)
	}}
}

// atMostOfBaseline is the target "v ≤ share × baseline's".
func atMostOfBaseline(text string, share float64) *target {
	return &target{text: text, met: func(_, perBaseline, _ float64) (bool, bool) {
		return perBaseline <= share, !math.IsNaN(perBaseline)
	}}
}

// atMostOfFloor is the target "v ≤ share × floor's".
func atMostOfFloor(text string, share float64) *target {
	return &target{text: text, met: func(_, _, perFloor float64) (bool, bool) {
		return perFloor <= share, !math.IsNaN(perFloor)
	}}
}

// rolloutStepRow is the time step i of the chart rollout took.
func rolloutStepRow(i int) row {
	return row{label: fmt.Sprintf("chart rollout: step %d (%s) took (s)", i+1, rolloutSteps[i]), format: "%.1f",
		get: func(r *result) float64 {
			if i >= len(r.RolloutSteps) {
				return math.NaN()
			}
			return r.RolloutSteps[i]
		}}
}

// perResource divides a count by the number of WebApps.
func perResource(r *result, v float64) float64 { return v / float64(r.N) }

// rows are the figures of the table, in print order.
var rows = []row{
	{label: "cold install: time until all Ready (s)", format: "%.1f",
		get: func(r *result) float64 { return r.Cold.wall }, target: atMostOfFloor("≤ 1.1× floor", 1.1)},
	{label: "cold install: CPU until all Ready (CPU-s)", format: "%.1f",
		get: func(r *result) float64 { return r.Cold.cpu }, target: atMostOfBaseline("≤ ¼ baseline", 0.25)},
	{label: "cold install: control plane's CPU meanwhile (CPU-s)", format: "%.1f",
		get: func(r *result) float64 { return r.Cold.controlPlane }},
	{label: "cold install: machine's CPU busy meanwhile (%)", format: "%.0f",
		get: func(r *result) float64 { return 100 * r.Cold.busy }},
	{label: "idle: CPU per minute (CPU-s)", format: "%.2f",
		get: func(r *result) float64 { return r.IdleCPUPerMin }, target: atMost("≤ 0.5 at N=1000", 0.5).at(1000)},
	{label: "churn: CPU per minute (CPU-s)", format: "%.2f",
		get: func(r *result) float64 { return r.ChurnCPUPerMin }, target: atMostOfBaseline("≤ 1/10 baseline", 0.1)},
	{label: "change wave: time until all Ready (s)", format: "%.1f",
		get: func(r *result) float64 { return r.Wave.wall }, target: atMostOfFloor("≤ 1.1× floor", 1.1)},
	{label: "change wave: CPU (CPU-s)", format: "%.1f",
		get: func(r *result) float64 { return r.Wave.cpu }, target: atMostOfBaseline("≤ ¼ baseline", 0.25)},
	{label: "change wave: control plane's CPU meanwhile (CPU-s)", format: "%.1f",
		get: func(r *result) float64 { return r.Wave.controlPlane }},
	{label: "change wave: machine's CPU busy meanwhile (%)", format: "%.0f",
		get: func(r *result) float64 { return 100 * r.Wave.busy }},
	{label: "restart: time until settled (s)", format: "%.1f",
		get: func(r *result) float64 { return r.RestartWall }},
	{label: "restart: CPU until settled (CPU-s)", format: "%.1f",
		get: func(r *result) float64 { return r.RestartCPU }},
	{label: "restart: API requests GET", format: "%.0f",
		get: func(r *result) float64 { return verbCount(r.RestartRequests, "GET") }},
	{label: "restart: API writes (" + writeVerbsDescription + ", dry runs apart)", format: "%.0f",
		get: func(r *result) float64 {
			writes := verbCount(r.RestartRequests, writeVerbs...)
			if r.RestartDryRuns != nil {
				writes -= *r.RestartDryRuns
			}
			return writes
		},
		target: atMost("0 when nothing changed", 0)},
	{label: "restart: drift comparisons (server-side dry runs) per resource", format: "%.2f", missing: "n/a",
		get: func(r *result) float64 {
			if r.RestartDryRuns == nil {
				return math.NaN()
			}
			return perResource(r, *r.RestartDryRuns)
		}},
	{label: "restart: stored-release decodes per resource", format: "%.2f", missing: "n/a",
		get: func(r *result) float64 {
			if r.RestartDecodes == nil {
				return math.NaN()
			}
			return perResource(r, *r.RestartDecodes)
		}, target: atMost("≤ 1", 1)},
	{label: "chart rollout in steps [1, 10%, 50%, 100%], no soak: time until Complete (s)", format: "%.1f",
		get: func(r *result) float64 { return r.Rollout.wall }},
	{label: "chart rollout: CPU (CPU-s)", format: "%.1f",
		get: func(r *result) float64 { return r.Rollout.cpu }},
	rolloutStepRow(0), rolloutStepRow(1), rolloutStepRow(2), rolloutStepRow(3),
	{label: "delete all: time until gone (s)", format: "%.1f",
		get: func(r *result) float64 { return r.Delete.wall }, target: atMostOfFloor("≤ 2× floor", 2)},
	{label: "delete all: CPU (CPU-s)", format: "%.1f",
		get: func(r *result) float64 { return r.Delete.cpu }},
	{label: "peak RSS (MiB)", format: "%.0f",
		get: func(r *result) float64 { return r.PeakRSS / (1 << 20) }},
	{label: "peak anonymous RSS (MiB)", format: "%.0f",
		get: func(r *result) float64 { return r.PeakAnonRSS / (1 << 20) }, target: atMost("≤ 80 at N=1000", 80).at(1000)},
	{label: "peak Go heap (MiB)", format: "%.0f",
		get: func(r *result) float64 { return r.PeakHeap / (1 << 20) }},
	requestRow("GET"), requestRow("POST"), requestRow("PUT"), requestRow("PATCH"), requestRow("DELETE"),
	{label: "API requests per resource, scenarios 1–3: all", format: "%.1f",
		get: func(r *result) float64 { return perResource(r, verbCount(r.Requests, verbs...)) }, target: atMost("≤ 10", 10)},
}

// requestRow is the row of API requests per resource of one verb over
// scenarios 1–3.
func requestRow(verb string) row {
	return row{label: "API requests per resource, scenarios 1–3: " + verb, format: "%.1f",
		get: func(r *result) float64 { return perResource(r, verbCount(r.Requests, verb)) }}
}

// verbCount adds up the requests of the given verbs; NaN when c is nil (the
// column has no such figure).
func verbCount(c counts, keys ...string) float64 {
	if c == nil {
		return math.NaN()
	}
	return c.total(keys...)
}

// formatTable prints the figures of the columns in results (a column absent
// from results, or nil, prints as "—") as a markdown table.
func formatTable(results map[string]*result) string {
	var b strings.Builder
	b.WriteString("| figure | floor | baseline | rudder | rudder/baseline | rudder/floor | target for rudder |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---|\n")
	for _, rw := range rows {
		vals := map[string]float64{}
		for _, c := range allColumns {
			vals[c] = math.NaN()
			if r := results[c]; r != nil {
				vals[c] = rw.get(r)
			}
		}
		perBaseline := ratio(vals[columnRudder], vals[columnBaseline])
		perFloor := ratio(vals[columnRudder], vals[columnFloor])
		cells := []string{rw.label}
		for _, c := range allColumns {
			cells = append(cells, rw.cell(vals[c]))
		}
		n := 0
		if r := results[columnRudder]; r != nil {
			n = r.N
		}
		cells = append(cells, formatRatio(perBaseline), formatRatio(perFloor), rw.targetText(n, vals[columnRudder], perBaseline, perFloor))
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	return b.String()
}

// cell prints one value of the row.
func (rw row) cell(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		if rw.missing != "" {
			return rw.missing
		}
		return "—"
	}
	return fmt.Sprintf(rw.format, v)
}

// targetText prints the row's target, followed by ✓ or ✗ when rudder's figure
// is known and the target applies to n WebApps.
func (rw row) targetText(n int, v, perBaseline, perFloor float64) string {
	if rw.target == nil {
		return ""
	}
	ok, known := rw.target.met(v, perBaseline, perFloor)
	if rw.target.atN != 0 && rw.target.atN != n {
		known = false
	}
	switch {
	case !known:
		return rw.target.text
	case ok:
		return rw.target.text + " ✓"
	default:
		return rw.target.text + " ✗"
	}
}

// ratio is a/b, or NaN when either is missing or b is 0.
func ratio(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) || b == 0 {
		return math.NaN()
	}
	return a / b
}

func formatRatio(r float64) string {
	if math.IsNaN(r) {
		return "—"
	}
	return fmt.Sprintf("%.2f×", r)
}
