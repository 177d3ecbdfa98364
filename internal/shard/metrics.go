package shard

import (
	"reflect"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// received counts what a manager's lists and watches brought, by whether it
// was its shard's own (everything is, unsharded). With server-side filtering
// the others' share stays near zero; with client-side filtering it is what
// sharding costs in traffic. The bench reads it as the traffic per shard.
var received = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "rudder_shard_objects_received_total",
	Help: "Objects the manager's lists and watches received from the API server, by kind, source (list, watch) and whether they belong to its shard (own: true, false; always true unsharded).",
}, []string{"kind", "source", "own"})

func init() { metrics.Registry.MustRegister(received) }

// counters of one informer's kind and source.
type counters struct{ own, others prometheus.Counter }

func countersOf(kind, source string) counters {
	return counters{own: received.WithLabelValues(kind, source, "true"), others: received.WithLabelValues(kind, source, "false")}
}

func (c counters) add(own bool) {
	if own {
		c.own.Inc()
	} else {
		c.others.Inc()
	}
}

// kindOf names the kind an informer holds: its GroupVersionKind's kind when
// the object carries one (unstructured, metadata-only), else its Go type's.
func kindOf(obj runtime.Object) string {
	if k := obj.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	t := reflect.TypeOf(obj)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}
