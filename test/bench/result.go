package bench

import "math"

// Column names, in the order the table prints them.
const (
	columnFloor    = "floor"
	columnBaseline = "baseline"
	columnRudder   = "rudder"
)

// allColumns is every column, in run and print order.
var allColumns = []string{columnFloor, columnBaseline, columnRudder}

// notApplicable marks a figure a column does not have (the floor has no
// operator to idle or restart). It prints as "—".
var notApplicable = math.NaN()

// result holds the figures of one column. CPU is in CPU-seconds of the
// measured process (the operator, or the floor's applier), wall times in
// seconds, memory in bytes.
type result struct {
	// N is the number of WebApps the scenarios ran with.
	N int

	// Cold and Wave are the cold install and the change wave, until all Ready.
	Cold, Wave spent
	// IdleCPUPerMin and ChurnCPUPerMin are CPU-seconds per minute.
	IdleCPUPerMin, ChurnCPUPerMin float64

	RestartWall, RestartCPU float64
	// RestartRequests are the API requests of the restarted process until it
	// settled, by HTTP method.
	RestartRequests counts
	// RestartDecodes is rudder_release_decodes_total when settled; nil when
	// the metrics endpoint does not have it.
	RestartDecodes *float64
	// RestartDryRuns is rudder_drift_comparisons_total when settled: the
	// PATCH requests of RestartRequests that were server-side dry runs,
	// which store nothing; nil when the endpoint does not have it.
	RestartDryRuns *float64

	// Rollout is the chart rollout (rudder only): a changed WebApp chart
	// rolled out in rudder's default steps with no soak, until Complete;
	// RolloutSteps are the seconds each step took, in order.
	Rollout      spent
	RolloutSteps []float64

	// Delete is delete all, until every object is gone.
	Delete spent

	// PeakRSS is VmHWM; PeakAnonRSS is the most RssAnon sampled: resident
	// memory that no page-out of the binary's clean pages changes.
	PeakRSS, PeakAnonRSS, PeakHeap float64
	// Requests are the API requests over scenarios 1–3 (cold install, idle
	// and churn, change wave), by HTTP method.
	Requests counts
	// Profile holds rudder's requests of each scenario of profileScenarios
	// by step, verb and resource (rudder_api_requests_total), by scenario
	// name; empty for other columns.
	Profile map[string]counts
}

// notSpent is a scenario's cost before it is measured.
var notSpent = spent{wall: notApplicable, cpu: notApplicable, controlPlane: notApplicable, busy: notApplicable}

// newResult returns a result whose every figure is notApplicable until set.
func newResult(n int) *result {
	na := notApplicable
	return &result{
		N: n, Cold: notSpent, IdleCPUPerMin: na, ChurnCPUPerMin: na, Wave: notSpent,
		RestartWall: na, RestartCPU: na, Rollout: notSpent, Delete: notSpent, PeakRSS: na, PeakAnonRSS: na, PeakHeap: na,
	}
}
