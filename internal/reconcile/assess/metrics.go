package assess

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	driftRepairs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rudder_drift_repairs_total",
		Help: "Objects of a release put back to the deployed revision after someone changed them, by kind and the object's kind.",
	}, []string{"kind", "object_kind"})
	driftComparisons = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rudder_drift_comparisons_total",
		Help: "Server-side dry-run applies of a release's objects, made to compare them with the live ones (drift detection); they store nothing. By kind.",
	}, []string{"kind"})
)

func init() {
	metrics.Registry.MustRegister(driftRepairs, driftComparisons)
}
