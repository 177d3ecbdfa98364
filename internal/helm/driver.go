package helm

import (
	"github.com/prometheus/client_golang/prometheus"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// decodes counts the stored revisions decoded (base64, gunzip, JSON) by Helm's
// actions and by rudder's own reads: the main cost of a release's storage.
var decodes = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "rudder_release_decodes_total",
	Help: "Stored Helm release revisions decoded from their storage Secrets.",
})

func init() {
	metrics.Registry.MustRegister(decodes)
}

// countingDriver is Helm's Secret driver, counting every revision it decodes.
type countingDriver struct {
	*driver.Secrets
}

func (d countingDriver) Get(key string) (*release.Release, error) {
	rel, err := d.Secrets.Get(key)
	if rel != nil {
		decodes.Inc()
	}
	return rel, err
}

func (d countingDriver) List(filter func(*release.Release) bool) ([]*release.Release, error) {
	var n float64
	rels, err := d.Secrets.List(func(r *release.Release) bool { n++; return filter(r) })
	decodes.Add(n)
	return rels, err
}

func (d countingDriver) Query(labels map[string]string) ([]*release.Release, error) {
	rels, err := d.Secrets.Query(labels)
	decodes.Add(float64(len(rels)))
	return rels, err
}
