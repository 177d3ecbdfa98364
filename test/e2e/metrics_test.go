//go:build e2e

package e2e

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
)

// Issue 13, metrics: after installs, an upgrade, a repaired drift, a failed
// upgrade, a rollback, a pause, an uninstall and a Database backup, the
// manager's /metrics endpoint has each of rudder's series with a plausible
// value. Every series found is logged with its value (the closing note's
// sample).
func TestMetrics_RudderSeries(t *testing.T) {
	t.Parallel() // own namespace; never restarts the manager or the cluster
	const ns = "metrics"
	createNamespace(t, ns)
	spec := map[string]any{"image": "nginx:1.21", "replicas": 1, "port": 80}

	app := newApp(t, ns, "m-app") // installed, upgraded, drifted and repaired
	app.create(spec)
	back := newApp(t, ns, "m-back") // upgraded, then rolled back
	back.create(spec)
	bad := newApp(t, ns, "m-bad") // an upgrade the API server rejects
	bad.create(spec)
	paused := newApp(t, ns, "m-paused")
	paused.create(spec)
	gone := newApp(t, ns, "m-gone") // uninstalled
	gone.create(spec)
	db := &nsDatabase{t: t, ns: ns, name: "m-db"}
	db.create(map[string]any{"version": "16", "storageSize": "1Gi", "database": "orders",
		"backup": map[string]any{"enabled": true, "schedule": "0 2 * * *", "storageSize": "1Gi"}})
	for _, a := range []*lcApp{app, back, bad, paused, gone} {
		a.waitServing(1, "nginx:1.21", 1)
	}
	db.waitReady(metav1.ConditionTrue, "Ready")

	app.patch(`{"spec":{"image":"nginx:1.22"}}`)
	back.patch(`{"spec":{"image":"nginx:1.22"}}`)
	app.waitServing(2, "nginx:1.22", 1)
	back.waitServing(2, "nginx:1.22", 1)
	kubectl(t, "set", "image", "deployment/m-app", "-n", ns, "webapp=nginx:drifted")
	eventually(t, "the drifted Deployment put back", func() error { return app.convergedOn("nginx:1.22") })
	back.annotate("rudder.dev/rollback-to=1")
	back.waitCondition("Released", metav1.ConditionTrue, "RolledBack")
	bad.patch(`{"spec":{"nodeSelector":{"not a label key!":"x"}}}`)
	bad.waitCondition("Released", metav1.ConditionFalse, "UpgradeFailed")
	paused.annotate("rudder.dev/paused=true")
	paused.waitCondition("Paused", metav1.ConditionTrue, "Paused")
	kubectl(t, "delete", "webapp", "m-gone", "-n", ns, "--wait=true", "--timeout=2m")
	db.backUp("metrics")

	now := float64(time.Now().Unix())
	type want struct {
		series string            // metric family
		labels map[string]string // a sample with at least these labels
		ok     func(v float64) (bool, string)
	}
	atLeast := func(n float64) func(float64) (bool, string) {
		return func(v float64) (bool, string) { return v >= n, fmt.Sprintf("want at least %v", n) }
	}
	wants := []want{
		{"rudder_reconcile_duration_seconds", map[string]string{"kind": "WebApp", "step": "install"}, atLeast(5)},
		{"rudder_reconcile_duration_seconds", map[string]string{"kind": "WebApp", "step": "upgrade"}, atLeast(2)},
		{"rudder_reconcile_duration_seconds", map[string]string{"kind": "WebApp", "step": "none"}, atLeast(1)},
		{"rudder_reconcile_duration_seconds", map[string]string{"kind": "Database", "step": "install"}, atLeast(1)},
		{"rudder_helm_action_duration_seconds", map[string]string{"kind": "WebApp", "action": "install", "result": "success"}, atLeast(5)},
		{"rudder_helm_action_duration_seconds", map[string]string{"kind": "WebApp", "action": "upgrade", "result": "success"}, atLeast(2)},
		{"rudder_helm_action_duration_seconds", map[string]string{"kind": "WebApp", "action": "upgrade", "result": "failure"}, atLeast(1)},
		{"rudder_helm_action_duration_seconds", map[string]string{"kind": "WebApp", "action": "rollback", "result": "success"}, atLeast(1)},
		{"rudder_helm_action_duration_seconds", map[string]string{"kind": "WebApp", "action": "uninstall", "result": "success"}, atLeast(1)},
		{"rudder_releases", map[string]string{"kind": "WebApp", "state": "deployed"}, atLeast(1)},
		{"rudder_releases", map[string]string{"kind": "WebApp", "state": "failed"}, atLeast(1)},
		{"rudder_releases", map[string]string{"kind": "WebApp", "state": "paused"}, atLeast(1)},
		{"rudder_releases", map[string]string{"kind": "WebApp", "state": "rolled_back"}, atLeast(1)},
		{"rudder_releases", map[string]string{"kind": "WebApp", "state": "out_of_band"}, atLeast(0)},
		{"rudder_releases", map[string]string{"kind": "WebApp", "state": "pending"}, atLeast(0)},
		{"rudder_releases", map[string]string{"kind": "Database", "state": "deployed"}, atLeast(1)},
		{"rudder_release_state", map[string]string{"kind": "WebApp", "namespace": ns, "name": "m-bad", "state": "failed"}, atLeast(1)},
		{"rudder_release_state", map[string]string{"kind": "WebApp", "namespace": ns, "name": "m-back", "state": "rolled_back"}, atLeast(1)},
		{"rudder_resource_ready", map[string]string{"kind": "WebApp", "namespace": ns, "name": "m-app"}, atLeast(1)},
		{"rudder_resource_ready", map[string]string{"kind": "Database", "namespace": ns, "name": "m-db"}, atLeast(1)},
		{"rudder_drift_repairs_total", map[string]string{"kind": "WebApp", "object_kind": "Deployment"}, atLeast(1)},
		{"rudder_drift_comparisons_total", map[string]string{"kind": "WebApp"}, atLeast(1)},
		{"rudder_api_requests_total", map[string]string{"verb": "patch", "resource": "webapps/status", "step": "status"}, atLeast(1)},
		{"rudder_api_requests_total", map[string]string{"verb": "create", "resource": "secrets", "step": "helm"}, atLeast(1)},
		{"rudder_hook_runs_total", map[string]string{"kind": "Database", "hook": "password", "result": "success"}, atLeast(1)},
		{"rudder_hook_runs_total", map[string]string{"kind": "Database", "hook": "backup", "result": "success"}, atLeast(1)},
		{"rudder_backups_total", map[string]string{"namespace": ns, "name": "m-db", "result": "success"}, atLeast(1)},
		{"rudder_backup_last_success_timestamp_seconds", map[string]string{"namespace": ns, "name": "m-db"}, func(v float64) (bool, string) {
			return v > now-3600 && v <= now+60, "want the last hour"
		}},
		{"rudder_backup_schedule_interval_seconds", map[string]string{"namespace": ns, "name": "m-db"}, func(v float64) (bool, string) {
			return v == 86400, "want 86400 (daily)"
		}},
		{"rudder_reconciler_entries", map[string]string{"kind": "WebApp"}, atLeast(1)},
	}

	families := scrape(t, shared.cur.metricsAddr)
	var names []string
	for name := range families {
		if strings.HasPrefix(name, "rudder_") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		for _, m := range families[name].GetMetric() {
			t.Logf("%s%s %v", name, labelString(m), sampleValue(m))
		}
	}
	for _, w := range wants {
		m := findSample(families[w.series], w.labels)
		if m == nil {
			t.Errorf("%s%v: no such series", w.series, w.labels)
			continue
		}
		v := sampleValue(m)
		if ok, why := w.ok(v); !ok {
			t.Errorf("%s%s = %v: %s", w.series, labelString(m), v, why)
		}
		if h := m.GetHistogram(); h != nil && h.GetSampleCount() > 0 {
			if mean := h.GetSampleSum() / float64(h.GetSampleCount()); mean <= 0 || mean > 300 {
				t.Errorf("%s%s: mean %vs, want a plausible duration", w.series, labelString(m), mean)
			}
		}
	}
}

// scrape reads the manager's /metrics as the suite's kubeconfig's user.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	status, body, err := getMetrics(addr, kubeconfigToken(t))
	if err != nil {
		t.Fatalf("scraping the manager's metrics: %v", err)
	}
	if status != http.StatusOK {
		t.Fatalf("scraping the manager's metrics: status %d: %.300s", status, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parsing the manager's metrics: %v", err)
	}
	return families
}

// metricsClient scrapes the managers.
var metricsClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
	TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
}}

// getMetrics GETs the manager's /metrics over HTTPS (its default,
// --metrics-secure) with token as the bearer token, if any. The manager's
// certificate is self-signed, so it is not verified, as the ServiceMonitor of
// config/prometheus does not.
func getMetrics(addr, token string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, "https://"+addr+"/metrics", http.NoBody)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := metricsClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// kubeconfigToken is the bearer token of the suite's kubeconfig (the local
// cluster's admin, hack/cluster-up.sh), which the API server authorizes to
// get /metrics.
func kubeconfigToken(t *testing.T) string {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv(envKubeconfig))
	if err != nil {
		t.Fatalf("reading %s: %v", os.Getenv(envKubeconfig), err)
	}
	if cfg.BearerToken == "" {
		t.Fatalf("kubeconfig %s has no bearer token to scrape the manager's metrics with", os.Getenv(envKubeconfig))
	}
	return cfg.BearerToken
}

// findSample returns the sample of f whose labels include labels.
func findSample(f *dto.MetricFamily, labels map[string]string) *dto.Metric {
	for _, m := range f.GetMetric() {
		if hasLabels(m, labels) {
			return m
		}
	}
	return nil
}

// sumSamples sums the values of f's samples whose labels include labels.
func sumSamples(f *dto.MetricFamily, labels map[string]string) float64 {
	var sum float64
	for _, m := range f.GetMetric() {
		if hasLabels(m, labels) {
			sum += sampleValue(m)
		}
	}
	return sum
}

// hasLabels reports whether m's labels include labels.
func hasLabels(m *dto.Metric, labels map[string]string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for k, v := range labels {
		if have[k] != v {
			return false
		}
	}
	return true
}

// sampleValue is a gauge's or counter's value, or a histogram's count.
func sampleValue(m *dto.Metric) float64 {
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetHistogram() != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return 0
}

func labelString(m *dto.Metric) string {
	parts := make([]string, 0, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		parts = append(parts, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
	}
	return "{" + strings.Join(parts, ",") + "}"
}
