package reconcile

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
)

// rudder's own series on the manager's metrics endpoint, next to
// controller-runtime's. config/prometheus alerts on them and
// config/grafana charts them; a test keeps both to these names.
var (
	reconcileSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rudder_reconcile_duration_seconds",
		Help:    "Time one reconcile of a custom resource took, by kind and the step it ran (install, upgrade, rollback, uninstall, none, wait, hold, paused, …).",
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"kind", "step"})
	helmSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rudder_helm_action_duration_seconds",
		Help:    "Time a Helm action on a release took, by kind, action (install, upgrade, rollback, uninstall) and result (success, failure); its _count counts the actions.",
		Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300},
	}, []string{"kind", "action", "result"})
	hookRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rudder_hook_runs_total",
		Help: "Runs of a kind's Go hooks, by kind, hook and result (success, failure).",
	}, []string{"kind", "hook", "result"})
)

func init() {
	metrics.Registry.MustRegister(reconcileSeconds, helmSeconds, hookRuns)
}

// result names an error's outcome as the metrics' result label.
func result(err error) string {
	if err != nil {
		return "failure"
	}
	return "success"
}

// observeHelm records one Helm action of the kind, started at started.
func (r *Reconciler) observeHelm(action string, started time.Time, err error) {
	helmSeconds.WithLabelValues(r.Watch.GVK.Kind, action, result(err)).Observe(time.Since(started).Seconds())
}

// Release states, the state label of rudder_releases.
const (
	stateNone       = "none" // nothing deployed yet
	stateDeployed   = "deployed"
	stateFailed     = "failed"
	statePending    = "pending"
	statePaused     = "paused"
	stateRolledBack = "rolled_back"
	stateOutOfBand  = "out_of_band"
)

var releaseStates = []string{stateNone, stateDeployed, stateFailed, statePending, statePaused, stateRolledBack, stateOutOfBand}

// stateOf says which state the release of o is in, with st the status just
// computed for it.
func stateOf(o *observation, st *status.Status) string {
	released := ""
	for _, c := range st.Conditions {
		if c.Type == status.ConditionReleased {
			released = c.Reason
		}
	}
	switch {
	case o.Facts.Paused:
		return statePaused
	case o.Facts.Latest != nil && plan.IsPending(o.Facts.Latest.Status), plan.AwaitsOutOfBand(o.Facts):
		return statePending
	case released == status.ReasonRolledBack || released == status.ReasonRemediated:
		return stateRolledBack
	case released == status.ReasonOutOfBand:
		return stateOutOfBand
	case st.Phase == status.PhaseFailed:
		return stateFailed
	case o.Facts.Deployed != nil:
		return stateDeployed
	}
	return stateNone
}

// resourceState is what the last status written for a custom resource said.
type resourceState struct {
	release string // one of releaseStates
	ready   bool   // the Ready condition was True
}

// stateOfStatus is the resourceState of o with st the status just computed.
func stateOfStatus(o *observation, st *status.Status) resourceState {
	rs := resourceState{release: stateOf(o, st)}
	for _, c := range st.Conditions {
		if c.Type == status.ConditionReady {
			rs.ready = c.Status == metav1.ConditionTrue
		}
	}
	return rs
}

// setState records key's state for the metrics.
func (m *memory) setState(key types.NamespacedName, rs resourceState) {
	m.update(key, func(e *entry) { e.state = &rs })
}

// states returns a copy of the states of every resource, for one scrape.
func (m *memory) states() map[types.NamespacedName]resourceState {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[types.NamespacedName]resourceState, len(m.m))
	for key, e := range m.m {
		if e.state != nil {
			out[key] = *e.state
		}
	}
	return out
}

// kindCollector exports what a kind's reconciler holds, computed at scrape
// time from the states it keeps anyway: rudder_releases by state, per
// resource rudder_release_state and rudder_resource_ready (so that an alert
// names the resource), and rudder_reconciler_entries.
type kindCollector struct {
	r        *Reconciler
	releases *prometheus.Desc
	state    *prometheus.Desc
	ready    *prometheus.Desc
	entries  *prometheus.Desc
}

func newKindCollector(r *Reconciler) *kindCollector {
	labels := prometheus.Labels{"kind": r.Watch.GVK.Kind, "group": r.Watch.GVK.Group}
	return &kindCollector{
		r: r,
		releases: prometheus.NewDesc("rudder_releases",
			"Custom resources of a kind by the state of their release (none, deployed, failed, pending, paused, rolled_back, out_of_band), as of their last reconcile.",
			[]string{"state"}, labels),
		state: prometheus.NewDesc("rudder_release_state",
			"1 for the state the release of a custom resource is in (none, deployed, failed, pending, paused, rolled_back, out_of_band), as of its last reconcile.",
			[]string{"namespace", "name", "state"}, labels),
		ready: prometheus.NewDesc("rudder_resource_ready",
			"1 when a custom resource's Ready condition was True at its last reconcile, else 0.",
			[]string{"namespace", "name"}, labels),
		entries: prometheus.NewDesc("rudder_reconciler_entries",
			"Custom resources of which the reconciler of a kind keeps something in memory (expectations, failures, status writes, states, out-of-band notices, test runs, decoded revisions).",
			nil, labels),
	}
}

// Describe implements prometheus.Collector.
func (c *kindCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.releases
	ch <- c.state
	ch <- c.ready
	ch <- c.entries
}

// Collect implements prometheus.Collector.
func (c *kindCollector) Collect(ch chan<- prometheus.Metric) {
	counts := make(map[string]int, len(releaseStates))
	for key, rs := range c.r.memory.states() {
		counts[rs.release]++
		ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, 1, key.Namespace, key.Name, rs.release)
		ready := 0.0
		if rs.ready {
			ready = 1
		}
		ch <- prometheus.MustNewConstMetric(c.ready, prometheus.GaugeValue, ready, key.Namespace, key.Name)
	}
	for _, state := range releaseStates {
		ch <- prometheus.MustNewConstMetric(c.releases, prometheus.GaugeValue, float64(counts[state]), state)
	}
	ch <- prometheus.MustNewConstMetric(c.entries, prometheus.GaugeValue, float64(c.r.memory.len()))
}

// initSeries creates the kind's Helm action and hook series at zero, so that
// rate() and increase() see their first failure (a series born at 1 shows
// no increase).
func (r *Reconciler) initSeries() {
	kind := r.Watch.GVK.Kind
	for _, action := range []string{"install", "upgrade", "rollback", "uninstall", "test"} {
		for _, res := range []string{"success", "failure"} {
			helmSeconds.WithLabelValues(kind, action, res)
		}
	}
	for _, h := range r.Hooks {
		for _, res := range []string{"success", "failure"} {
			hookRuns.WithLabelValues(kind, h.Name(), res)
		}
	}
}

// registerCollector exports the kind's collector on the manager's metrics
// endpoint.
func (r *Reconciler) registerCollector() error {
	if err := metrics.Registry.Register(newKindCollector(r)); err != nil {
		if are := (prometheus.AlreadyRegisteredError{}); errors.As(err, &are) {
			return nil // a second manager in one process (tests): the first one's collector stays
		}
		return err
	}
	return nil
}
