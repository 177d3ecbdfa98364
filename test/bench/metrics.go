package bench

import (
	"fmt"
	"io"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metric names read from an operator's metrics endpoint.
const (
	metricRequests        = "rest_client_requests_total"
	metricQueueDepth      = "workqueue_depth"
	metricReconciles      = "controller_runtime_reconcile_total"
	metricHeapInuse       = "go_memstats_heap_inuse_bytes"
	metricHeapAlloc       = "go_memstats_heap_alloc_bytes"
	metricReleaseDecodes  = "rudder_release_decodes_total"
	metricDryRuns         = "rudder_drift_comparisons_total"
	metricProfile         = "rudder_api_requests_total"
	labelRequestMethod    = "method"
	writeVerbsDescription = "POST/PUT/PATCH/DELETE"
)

// verbs are the HTTP methods client-go's request metric is partitioned by, in
// the order the table prints them.
var verbs = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// writeVerbs are the verbs that change something on the API server.
var writeVerbs = []string{"POST", "PUT", "PATCH", "DELETE"}

// scrape is one reading of a metrics endpoint, by metric family name.
type scrape map[string]*dto.MetricFamily

// parseScrape reads the Prometheus text exposition format.
func parseScrape(r io.Reader) (scrape, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parsing metrics: %w", err)
	}
	return scrape(families), nil
}

// has says whether the endpoint exposed the family name.
func (s scrape) has(name string) bool {
	_, ok := s[name]
	return ok
}

// sum adds up every sample of the counter or gauge name; 0 when absent.
func (s scrape) sum(name string) float64 {
	var total float64
	if f, ok := s[name]; ok {
		for _, m := range f.GetMetric() {
			total += value(m)
		}
	}
	return total
}

// byLabel adds up the samples of name per value of label. Label values are
// upper-cased so that "get" and "GET" count together.
func (s scrape) byLabel(name, label string) counts {
	out := counts{}
	f, ok := s[name]
	if !ok {
		return out
	}
	for _, m := range f.GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == label {
				out[strings.ToUpper(lp.GetValue())] += value(m)
			}
		}
	}
	return out
}

// requests returns the API requests the process made, by HTTP method.
func (s scrape) requests() counts {
	return s.byLabel(metricRequests, labelRequestMethod)
}

// profile returns rudder's API requests by step, verb and resource, each
// key the three joined by profileSep; empty for an operator without them.
func (s scrape) profile() counts {
	out := counts{}
	f, ok := s[metricProfile]
	if !ok {
		return out
	}
	for _, m := range f.GetMetric() {
		l := map[string]string{}
		for _, lp := range m.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		out[strings.Join([]string{l["step"], l["verb"], l["resource"]}, profileSep)] += value(m)
	}
	return out
}

// profileSep joins the labels of a profile key.
const profileSep = " "

// heapBytes returns the Go heap in use, or the allocated heap when the
// endpoint lacks the in-use figure; 0 when it has neither.
func (s scrape) heapBytes() float64 {
	if s.has(metricHeapInuse) {
		return s.sum(metricHeapInuse)
	}
	return s.sum(metricHeapAlloc)
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}

// counts is a number per key, such as API requests per HTTP method.
type counts map[string]float64

// add returns a new counts holding c plus d.
func (c counts) add(d counts) counts {
	out := counts{}
	for k, v := range c {
		out[k] += v
	}
	for k, v := range d {
		out[k] += v
	}
	return out
}

// sub returns a new counts holding c minus d.
func (c counts) sub(d counts) counts {
	out := counts{}
	for k, v := range c {
		out[k] += v
	}
	for k, v := range d {
		out[k] -= v
	}
	return out
}

// total adds up the keys given, or every key when none is given.
func (c counts) total(keys ...string) float64 {
	var t float64
	if len(keys) == 0 {
		for _, v := range c {
			t += v
		}
		return t
	}
	for _, k := range keys {
		t += c[k]
	}
	return t
}
