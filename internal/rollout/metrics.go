package rollout

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// rudder_rollout_* series: config/prometheus alerts on a halted rollout and
// config/grafana charts each kind's.
var (
	stepGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rudder_rollout_step",
		Help: "The current step of a kind's chart rollout, from 1, by kind and rollout.",
	}, []string{"kind", "rollout"})
	resourcesGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rudder_rollout_resources",
		Help: "Resources of a kind's chart rollout, by kind, rollout and state: total, updated (on the chart), ready (on it and Ready), failed.",
	}, []string{"kind", "rollout", "state"})
	phaseGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rudder_rollout_phase",
		Help: "1 for the phase a kind's chart rollout is in (Progressing, Paused, Halted, Complete, Undoing, Undone, Superseded), 0 for the others.",
	}, []string{"kind", "rollout", "phase"})
)

var phases = []string{PhaseProgressing, PhasePaused, PhaseHalted, PhaseComplete, PhaseUndoing, PhaseUndone, PhaseSuperseded}

func init() {
	metrics.Registry.MustRegister(stepGauge, resourcesGauge, phaseGauge)
}

// observe exports cr's status as the coordinator last wrote it.
func observe(kind string, cr *ChartRollout) {
	st := cr.Status
	stepGauge.WithLabelValues(kind, cr.Name).Set(float64(st.Step))
	for state, n := range map[string]int{"total": st.Total, "updated": st.Updated, "ready": st.Ready, "failed": st.Failed} {
		resourcesGauge.WithLabelValues(kind, cr.Name, state).Set(float64(n))
	}
	for _, p := range phases {
		v := 0.0
		if p == st.Phase {
			v = 1
		}
		phaseGauge.WithLabelValues(kind, cr.Name, p).Set(v)
	}
}
