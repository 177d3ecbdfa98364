package manager

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The files of Options.MetricsCertDir, named as a kubernetes.io/tls Secret
// mounted there names them.
const (
	metricsCertFile = "tls.crt"
	metricsKeyFile  = "tls.key"
)

// metricsServer returns the options of the metrics endpoint, as kubebuilder
// scaffolds them: HTTPS, with each request's bearer token authenticated and
// authorized by the API server (controller-runtime's filters; rudder's
// ServiceAccount needs tokenreviews and subjectaccessreviews create), or plain
// HTTP when opts.MetricsInsecure. A MetricsCertDir without both files is
// refused rather than replaced by a self-signed certificate.
func metricsServer(opts Options, log logr.Logger) (metricsserver.Options, error) {
	o := metricsserver.Options{BindAddress: opts.MetricsAddr}
	if opts.MetricsInsecure {
		if opts.MetricsAddr != "0" {
			log.Info("Serving metrics over plain HTTP to any client: --metrics-secure=false is meant for local development",
				"address", opts.MetricsAddr)
		}
		return o, nil
	}
	o.SecureServing = true
	o.FilterProvider = filters.WithAuthenticationAndAuthorization
	// HTTP/1.1 only, as kubebuilder's scaffold unless --enable-http2: a
	// scrape gains nothing from HTTP/2, and HTTP/2's stream resets made
	// servers exhaustible (CVE-2023-44487, CVE-2023-39325).
	o.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	if opts.MetricsCertDir != "" {
		for _, name := range []string{metricsCertFile, metricsKeyFile} {
			if _, err := os.Stat(filepath.Join(opts.MetricsCertDir, name)); err != nil {
				return o, fmt.Errorf("--metrics-cert-path %s: it must hold %s and %s: %w", opts.MetricsCertDir, metricsCertFile, metricsKeyFile, err)
			}
		}
		o.CertDir, o.CertName, o.KeyName = opts.MetricsCertDir, metricsCertFile, metricsKeyFile
	}
	return o, nil
}
