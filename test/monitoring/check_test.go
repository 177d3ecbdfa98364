package monitoring

import (
	"slices"
	"strings"
	"testing"
)

// TestCheck_Problems: the checker passes what rudder serves and names what
// is wrong otherwise, so that the tests of the config files can trust it.
func TestCheck_Problems(t *testing.T) {
	tests := []struct {
		name string
		expr string
		want []string // substrings, one problem each; none: the expression is fine
	}{
		{name: "gauge", expr: `rudder_resource_ready == 0`},
		{name: "histogram bucket in a quantile", expr: `histogram_quantile(0.99, sum by (kind, le) (rate(rudder_reconcile_duration_seconds_bucket[5m])))`},
		{name: "name matcher", expr: `{__name__="rudder_releases", state="failed"}`},
		{name: "closed values as alternation", expr: `rudder_release_state{state=~"failed|paused"}`},
		{name: "grafana variable", expr: `rudder_releases{kind=~"$kind"}`},
		{name: "target label", expr: `rudder_releases{pod="p"}`},
		{name: "shared series with job", expr: `rate(controller_runtime_reconcile_errors_total{job="rudder"}[5m])`},
		{name: "selectors in a subquery", expr: `min_over_time(timestamp(rudder_backup_schedule_interval_seconds)[1d:1h]) unless on (name) rudder_backup_last_success_timestamp_seconds`},
		{name: "unknown name", expr: `rudder_release_failed`, want: []string{"no series rudder_release_failed"}},
		{name: "unknown name in a function", expr: `absent(rudder_up)`, want: []string{"no series rudder_up"}},
		{name: "histogram without suffix", expr: `rate(rudder_helm_action_duration_seconds[5m])`, want: []string{"is a histogram"}},
		{name: "le only on buckets", expr: `rudder_helm_action_duration_seconds_count{le="1"}`, want: []string{"no label le"}},
		{name: "label it lacks", expr: `rudder_releases{name="x"}`, want: []string{"no label name"}},
		{name: "value never taken", expr: `rudder_helm_action_duration_seconds_count{result="failed"}`, want: []string{`never ["failed"]`}},
		{name: "one wrong value of an alternation", expr: `rudder_release_state{state=~"failed|failing"}`, want: []string{`never ["failing"]`}},
		{name: "shared series without job", expr: `workqueue_depth`, want: []string{"add a job matcher"}},
		{name: "pattern of names", expr: `{__name__=~"rudder_.+"}`, want: []string{"names no single series"}},
		{name: "every selector", expr: `rudder_nope + on () rudder_neither`, want: []string{"rudder_nope", "rudder_neither"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			problems, err := Check(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			if len(problems) != len(tt.want) {
				t.Fatalf("Check(%s) = %q, want %d problem(s) naming %q", tt.expr, problems, len(tt.want), tt.want)
			}
			for i, want := range tt.want {
				if !strings.Contains(problems[i], want) {
					t.Errorf("problem %d = %q, want it to name %q", i, problems[i], want)
				}
			}
		})
	}
}

// TestCheck_ParseError: an expression Prometheus would refuse is an error,
// not a pass.
func TestCheck_ParseError(t *testing.T) {
	for _, expr := range []string{
		`rate(rudder_releases)`,                     // a range vector is needed
		`rudder_releases[$__rate_interval]`,         // a Grafana macro left in
		`sum by (kind) rudder_releases`,             // no parentheses
		`rudder_resource_ready == 0 unless on kind`, // no parentheses
	} {
		if _, err := Check(expr); err == nil {
			t.Errorf("Check(%s) = nil error, want a parse error", expr)
		}
	}
}

// TestNames lists each metric name once, sorted.
func TestNames(t *testing.T) {
	got, err := Names(`rudder_resource_ready == 0 unless on (name) rudder_release_state{state="failed"} or rudder_resource_ready`)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"rudder_release_state", "rudder_resource_ready"}; !slices.Equal(got, want) {
		t.Errorf("Names = %q, want %q", got, want)
	}
}
