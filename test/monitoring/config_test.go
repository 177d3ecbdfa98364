package monitoring

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"text/template"

	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"
)

// The files under test, from this module's directory (go test runs there).
const (
	prometheusDir = "../../config/prometheus"
	rulesFile     = prometheusDir + "/prometheusrule.yaml"
	dashboardFile = "../../config/grafana/rudder-dashboard.json"
	managerFile   = "../../config/manager/manager.yaml"
)

// prometheusRule is the part of a monitoring.coreos.com/v1 PrometheusRule
// that the tests read.
type prometheusRule struct {
	object
	Spec struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []rule `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

type rule struct {
	Alert       string            `json:"alert"`
	Record      string            `json:"record"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// readYAML reads the one YAML document of path into into, failing on any
// field into lacks when strict.
func readYAML(t *testing.T, path string, into any, strict bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	unmarshal := yaml.Unmarshal
	if strict {
		unmarshal = yaml.UnmarshalStrict
	}
	if err := unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func loadRules(t *testing.T) []rule {
	t.Helper()
	// Strict: a misspelled field (fro: 10m) would otherwise vanish.
	var pr prometheusRule
	readYAML(t, rulesFile, &pr, true)
	if pr.Kind != "PrometheusRule" {
		t.Fatalf("%s: kind %q, want PrometheusRule", rulesFile, pr.Kind)
	}
	var rules []rule
	for _, g := range pr.Spec.Groups {
		rules = append(rules, g.Rules...)
	}
	if len(rules) == 0 {
		t.Fatalf("%s: no rules", rulesFile)
	}
	return rules
}

// checkExpr fails the test for each problem Check finds in expr and returns
// the names it selects.
func checkExpr(t *testing.T, expr string) []string {
	t.Helper()
	problems, err := Check(expr)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	names, err := Names(expr)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestPrometheusRule_Expressions: every rule's expression parses and selects
// only series rudder serves, with their labels and values.
func TestPrometheusRule_Expressions(t *testing.T) {
	used := map[string]bool{}
	for _, r := range loadRules(t) {
		t.Run(r.Alert+r.Record, func(t *testing.T) {
			for _, name := range checkExpr(t, r.Expr) {
				used[name] = true
			}
		})
	}
	t.Logf("the alerts use %d series: %s", len(used), strings.Join(sortedKeys(used), " "))
}

// promTemplatePrelude is what Prometheus puts before an alert's annotation
// templates, so that they can use $labels and $value.
const promTemplatePrelude = "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}{{$externalURL := .ExternalURL}}{{$value := .Value}}"

// promTemplateFuncs names the functions Prometheus's alert templates have
// (its template reference); parsing needs only their names.
var promTemplateFuncs = func() template.FuncMap {
	m := template.FuncMap{}
	for _, name := range []string{
		"query", "first", "label", "value", "strvalue", "sortByLabel",
		"humanize", "humanize1024", "humanizeDuration", "humanizePercentage", "humanizeTimestamp",
		"toTime", "toDuration", "now", "parseDuration",
		"title", "toUpper", "toLower", "match", "reReplaceAll", "stripPort", "stripDomain",
		"graphLink", "tableLink", "args", "tmpl", "safeHtml", "externalURL", "pathPrefix",
	} {
		m[name] = func(...any) string { return "" }
	}
	return m
}()

// TestPrometheusRule_Alerts: the alerts issue 13 asks for are there with its
// durations, and every alert has a severity and annotations that parse.
func TestPrometheusRule_Alerts(t *testing.T) {
	rules := loadRules(t)
	byName := map[string]rule{}
	for _, r := range rules {
		if r.Alert == "" {
			t.Errorf("a rule without alert (record %q): this file holds alerts only", r.Record)
			continue
		}
		if _, dup := byName[r.Alert]; dup {
			t.Errorf("alert %s twice", r.Alert)
		}
		byName[r.Alert] = r
	}
	tests := []struct {
		alert, forDuration string
	}{
		{"RudderReleaseFailed", "10m"},
		{"RudderResourceNotReady", "15m"},
		{"RudderBackupTooOld", ""},
		{"RudderBackupNeverSucceeded", ""},
		{"RudderReconcileErrorsRising", ""},
		{"RudderHelmActionFailuresRising", ""},
	}
	for _, tt := range tests {
		r, ok := byName[tt.alert]
		if !ok {
			t.Errorf("no alert %s", tt.alert)
			continue
		}
		if tt.forDuration != "" && r.For != tt.forDuration {
			t.Errorf("%s: for %q, want %q", tt.alert, r.For, tt.forDuration)
		}
	}
	for _, r := range rules {
		t.Run(r.Alert, func(t *testing.T) {
			if r.For != "" {
				if _, err := model.ParseDuration(r.For); err != nil {
					t.Errorf("for: %v", err)
				}
			}
			if s := r.Labels["severity"]; s != "critical" && s != "warning" {
				t.Errorf("severity %q, want critical or warning", s)
			}
			for _, key := range []string{"summary", "description"} {
				text := r.Annotations[key]
				if text == "" {
					t.Errorf("no %s annotation", key)
					continue
				}
				if _, err := template.New(key).Funcs(promTemplateFuncs).Parse(promTemplatePrelude + text); err != nil {
					t.Errorf("%s: %v", key, err)
				}
			}
		})
	}
}

// dashboard is the part of a Grafana dashboard model that the tests read.
type dashboard struct {
	Title      string  `json:"title"`
	UID        string  `json:"uid"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID         int         `json:"id"`
	Title      string      `json:"title"`
	Type       string      `json:"type"`
	Datasource *datasource `json:"datasource"`
	Targets    []struct {
		RefID      string      `json:"refId"`
		Expr       string      `json:"expr"`
		Datasource *datasource `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"` // a string, or {"query": "…"}
	Datasource *datasource     `json:"datasource"`
}

// queryText is a query variable's query, whichever way Grafana saved it.
func (v variable) queryText() (string, error) {
	var s string
	if err := json.Unmarshal(v.Query, &s); err == nil {
		return s, nil
	}
	var q struct {
		Query string `json:"query"`
	}
	err := json.Unmarshal(v.Query, &q)
	return q.Query, err
}

// grafanaMacros are the variables Grafana replaces with a duration before it
// sends a query; they stand where PromQL wants one, so the test does the same.
var grafanaMacros = strings.NewReplacer("$__rate_interval", "2m", "$__interval", "30s", "$__range", "6h")

// labelValues takes apart the query of a Grafana query variable over
// Prometheus, label_values(<series selector>, <label>): Grafana's syntax
// around PromQL. The selector inside is then parsed as PromQL.
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)

// fromDatasourceVariable reports whether ds is the dashboard's datasource
// variable, so that the dashboard works with any Prometheus it is given.
func fromDatasourceVariable(ds *datasource) bool {
	return ds != nil && ds.Type == "prometheus" && ds.UID == "${datasource}"
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// TestDashboard_Expressions: every panel target's expression and every
// variable's query parses and selects only series rudder serves.
func TestDashboard_Expressions(t *testing.T) {
	d := loadDashboard(t)
	used := map[string]bool{}
	var walk func(panels []panel)
	count := 0
	walk = func(panels []panel) {
		for _, p := range panels {
			walk(p.Panels)
			for _, target := range p.Targets {
				count++
				t.Run(p.Title+"/"+target.RefID, func(t *testing.T) {
					if target.Expr == "" {
						t.Fatal("no expr")
					}
					for _, name := range checkExpr(t, grafanaMacros.Replace(target.Expr)) {
						used[name] = true
					}
				})
			}
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		t.Run("variable "+v.Name, func(t *testing.T) {
			q, err := v.queryText()
			if err != nil {
				t.Fatal(err)
			}
			m := labelValues.FindStringSubmatch(q)
			if m == nil {
				t.Fatalf("query %q: want label_values(<series>, <label>)", q)
			}
			for _, name := range checkExpr(t, m[1]) {
				if s := knownSeries[name]; !slices.Contains(s.Labels, m[2]) && !slices.Contains(targetLabels, m[2]) {
					t.Errorf("query %q: %s has no label %s", q, name, m[2])
				}
			}
		})
	}
	if count == 0 {
		t.Fatalf("%s: no panel targets", dashboardFile)
	}
	t.Logf("%d panel queries use %d series: %s", count, len(used), strings.Join(sortedKeys(used), " "))
}

// TestDashboard_Datasource: the dashboard has a Prometheus datasource
// variable and every panel, target and query variable uses it; panel ids
// are unique, as Grafana needs them to be.
func TestDashboard_Datasource(t *testing.T) {
	d := loadDashboard(t)
	if d.Title == "" || d.UID == "" {
		t.Errorf("title %q, uid %q: want both", d.Title, d.UID)
	}
	found := false
	for _, v := range d.Templating.List {
		switch v.Type {
		case "datasource":
			var q string
			found = v.Name == "datasource" && json.Unmarshal(v.Query, &q) == nil && q == "prometheus"
		case "query":
			if !fromDatasourceVariable(v.Datasource) {
				t.Errorf("variable %s: datasource %+v, want ${datasource}", v.Name, v.Datasource)
			}
		}
	}
	if !found {
		t.Error(`no variable "datasource" of type datasource over prometheus`)
	}
	ids := map[int]string{}
	var walk func(panels []panel)
	walk = func(panels []panel) {
		for _, p := range panels {
			walk(p.Panels)
			if other, dup := ids[p.ID]; dup {
				t.Errorf("panels %q and %q share id %d", other, p.Title, p.ID)
			}
			ids[p.ID] = p.Title
			if p.Type == "row" {
				continue
			}
			if !fromDatasourceVariable(p.Datasource) {
				t.Errorf("panel %q: datasource %+v, want ${datasource}", p.Title, p.Datasource)
			}
			for _, target := range p.Targets {
				if !fromDatasourceVariable(target.Datasource) {
					t.Errorf("panel %q, target %s: datasource %+v, want ${datasource}", p.Title, target.RefID, target.Datasource)
				}
			}
		}
	}
	walk(d.Panels)
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// object is the part of a Kubernetes object that the tests read.
type object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
}

// readDocuments splits the YAML file path into its documents.
func readDocuments(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs [][]byte
	for doc := range strings.SplitSeq(string(data), "\n---\n") {
		if strings.TrimSpace(doc) != "" {
			docs = append(docs, []byte(doc))
		}
	}
	return docs
}

// TestKustomization_Resources: config/prometheus's kustomization lists every
// object file there, each file parses, and each object is rudder's (the
// standard labels) in its namespace.
func TestKustomization_Resources(t *testing.T) {
	var k struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Namespace  string   `json:"namespace"`
		Resources  []string `json:"resources"`
	}
	readYAML(t, filepath.Join(prometheusDir, "kustomization.yaml"), &k, false)
	files, err := filepath.Glob(filepath.Join(prometheusDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		if base := filepath.Base(f); base != "kustomization.yaml" {
			want = append(want, base)
		}
	}
	got := slices.Sorted(slices.Values(k.Resources))
	if !slices.Equal(got, want) {
		t.Errorf("kustomization.yaml resources %q, want the files %q", got, want)
	}
	for _, name := range want {
		for _, doc := range readDocuments(t, filepath.Join(prometheusDir, name)) {
			var o object
			if err := yaml.Unmarshal(doc, &o); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if o.Kind == "" || o.APIVersion == "" || o.Metadata.Name == "" {
				t.Errorf("%s: kind %q, apiVersion %q, name %q: want all three", name, o.Kind, o.APIVersion, o.Metadata.Name)
			}
			if o.Metadata.Namespace != k.Namespace {
				t.Errorf("%s: namespace %q, want the kustomization's %q", name, o.Metadata.Namespace, k.Namespace)
			}
			for _, label := range []string{"app.kubernetes.io/name", "app.kubernetes.io/part-of", "app.kubernetes.io/managed-by"} {
				if o.Metadata.Labels[label] == "" {
					t.Errorf("%s %s: no label %s", o.Kind, o.Metadata.Name, label)
				}
			}
		}
	}
}

// TestServiceMonitor_ScrapesManager: the Service selects the manager's pods
// and targets its metrics port, and the ServiceMonitor selects the Service
// and scrapes that port with rudder's own namespace label kept, so that a
// wrong label anywhere cannot leave Prometheus scraping nothing.
func TestServiceMonitor_ScrapesManager(t *testing.T) {
	var deployment struct {
		object
		Spec struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			Template struct {
				Metadata struct {
					Labels map[string]string `json:"labels"`
				} `json:"metadata"`
				Spec struct {
					Containers []struct {
						Args  []string `json:"args"`
						Ports []struct {
							Name          string `json:"name"`
							ContainerPort int    `json:"containerPort"`
						} `json:"ports"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	for _, doc := range readDocuments(t, managerFile) {
		var o object
		if err := yaml.Unmarshal(doc, &o); err != nil {
			t.Fatal(err)
		}
		if o.Kind == "Deployment" {
			if err := yaml.Unmarshal(doc, &deployment); err != nil {
				t.Fatal(err)
			}
		}
	}
	var service struct {
		object
		Spec struct {
			Selector map[string]string `json:"selector"`
			Ports    []struct {
				Name       string `json:"name"`
				Port       int    `json:"port"`
				TargetPort string `json:"targetPort"`
			} `json:"ports"`
		} `json:"spec"`
	}
	readYAML(t, filepath.Join(prometheusDir, "service.yaml"), &service, false)
	var monitor struct {
		object
		Spec struct {
			JobLabel string `json:"jobLabel"`
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			Endpoints []struct {
				Port            string `json:"port"`
				Path            string `json:"path"`
				Scheme          string `json:"scheme"`
				Interval        string `json:"interval"`
				HonorLabels     bool   `json:"honorLabels"`
				BearerTokenFile string `json:"bearerTokenFile"`
				TLSConfig       *struct {
					InsecureSkipVerify bool `json:"insecureSkipVerify"`
				} `json:"tlsConfig"`
			} `json:"endpoints"`
		} `json:"spec"`
	}
	readYAML(t, filepath.Join(prometheusDir, "servicemonitor.yaml"), &monitor, false)

	if deployment.Kind != "Deployment" {
		t.Fatalf("%s: no Deployment", managerFile)
	}
	if service.Metadata.Namespace != deployment.Metadata.Namespace || monitor.Metadata.Namespace != service.Metadata.Namespace {
		t.Errorf("namespaces: Deployment %q, Service %q, ServiceMonitor %q: want one", deployment.Metadata.Namespace, service.Metadata.Namespace, monitor.Metadata.Namespace)
	}
	if !subset(service.Spec.Selector, deployment.Spec.Template.Metadata.Labels) || len(service.Spec.Selector) == 0 {
		t.Errorf("Service selector %v does not select the manager's pods %v", service.Spec.Selector, deployment.Spec.Template.Metadata.Labels)
	}
	if len(service.Spec.Ports) != 1 || service.Spec.Ports[0].Name != "https" {
		t.Fatalf("Service ports %+v: want one, named https", service.Spec.Ports)
	}
	containerPort := 0
	for _, c := range deployment.Spec.Template.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == service.Spec.Ports[0].TargetPort {
				containerPort = p.ContainerPort
				if want := fmt.Sprintf("--metrics-bind-address=:%d", p.ContainerPort); !slices.Contains(c.Args, want) {
					t.Errorf("the manager's args %q: want %s, the container port %s", c.Args, want, p.Name)
				}
			}
		}
	}
	if containerPort == 0 {
		t.Errorf("Service targetPort %q names no container port of the manager", service.Spec.Ports[0].TargetPort)
	}
	if !subset(monitor.Spec.Selector.MatchLabels, service.Metadata.Labels) || len(monitor.Spec.Selector.MatchLabels) == 0 {
		t.Errorf("ServiceMonitor selector %v does not select the Service's labels %v", monitor.Spec.Selector.MatchLabels, service.Metadata.Labels)
	}
	// The alerts select controller-runtime's series by job="rudder".
	if job := service.Metadata.Labels[monitor.Spec.JobLabel]; job != "rudder" {
		t.Errorf("ServiceMonitor jobLabel %q gives job %q, want rudder (prometheusrule.yaml uses it)", monitor.Spec.JobLabel, job)
	}
	if len(monitor.Spec.Endpoints) != 1 {
		t.Fatalf("ServiceMonitor endpoints %+v: want one", monitor.Spec.Endpoints)
	}
	e := monitor.Spec.Endpoints[0]
	if e.Port != service.Spec.Ports[0].Name || e.Path != "/metrics" || e.Scheme != "https" || !e.HonorLabels {
		t.Errorf("ServiceMonitor endpoint %+v: want port %s, path /metrics, scheme https, honorLabels", e, service.Spec.Ports[0].Name)
	}
	// The manager serves /metrics only to a token the API server authorizes
	// (--metrics-secure), over TLS with a self-signed certificate by default.
	if e.BearerTokenFile == "" {
		t.Error("ServiceMonitor endpoint has no bearerTokenFile: the manager answers 401 to a scrape without a token")
	}
	if e.TLSConfig == nil {
		t.Error("ServiceMonitor endpoint has no tlsConfig: Prometheus would refuse the manager's self-signed certificate")
	}
	if _, err := model.ParseDuration(e.Interval); err != nil {
		t.Errorf("ServiceMonitor interval: %v", err)
	}
}

// subset reports whether every label of sel is in labels.
func subset(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}
