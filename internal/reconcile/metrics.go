package reconcile

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// registerEntriesGauge exports r.entries() as rudder_reconciler_entries{kind}
// on the manager's metrics endpoint: what the reconciler of a kind holds in
// memory per resource, which must fall back to 0 once the resources are gone.
func (r *Reconciler) registerEntriesGauge() error {
	g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "rudder_reconciler_entries",
		Help:        "Per-resource entries the reconciler of a kind keeps in memory (expectations, failures, status writes, out-of-band notices, decoded revisions by release).",
		ConstLabels: prometheus.Labels{"kind": r.Watch.GVK.Kind, "group": r.Watch.GVK.Group},
	}, func() float64 { return float64(r.entries()) })
	if err := metrics.Registry.Register(g); err != nil {
		if are := (prometheus.AlreadyRegisteredError{}); errors.As(err, &are) {
			return nil // a second manager in one process (tests): the first one's gauge stays
		}
		return err
	}
	return nil
}
