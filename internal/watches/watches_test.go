package watches_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/rudder-operator/rudder/internal/watches"
)

// appChart is a tiny chart at dir: Chart.yaml, a helper template and a template using it.
func appChart(dir string) fstest.MapFS {
	return fstest.MapFS{
		dir + "/Chart.yaml":               {Data: []byte("apiVersion: v2\nname: app\nversion: 0.1.0\n")},
		dir + "/templates/_helpers.tpl":   {Data: []byte(`{{- define "app.name" -}}{{ .Chart.Name }}{{- end -}}`)},
		dir + "/templates/configmap.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ include \"app.name\" . }}\n")},
	}
}

// fsWith is a file system holding watches.yaml with content watchesYAML and the chart charts/app.
func fsWith(watchesYAML string) fstest.MapFS {
	fsys := appChart("charts/app")
	fsys["watches.yaml"] = &fstest.MapFile{Data: []byte(watchesYAML)}
	return fsys
}

// webApp is an entry for the chart charts/app; tests append fields to it.
const webApp = `
- group: webapp.my.domain
  version: v1
  kind: WebApp
  chart: charts/app
`

// database is a second, valid entry.
const database = `
- group: db.my.domain
  version: v1beta1
  kind: Database
  chart: charts/app
`

func TestLoad(t *testing.T) {
	t.Setenv("CERT_VALIDITY_DURATION", "720h")
	t.Setenv("RELATED_IMAGE_PROXY", "")
	t.Setenv("RUDDER_TEST_IMAGE", "registry.example.com/app")
	t.Setenv("RUDDER_TEST_TAG", "v2")

	tests := []struct {
		name  string
		fsys  fs.FS
		file  string
		check func(t *testing.T, got []watches.Watch)
	}{
		{
			name: "operator-sdk watches file loads unchanged",
			fsys: os.DirFS("testdata"),
			file: "operator-sdk/watches.yaml",
			check: func(t *testing.T, got []watches.Watch) {
				if len(got) != 2 {
					t.Fatalf("got %d watches, want 2", len(got))
				}
				w := got[0]
				wantGVK := schema.GroupVersionKind{Group: "demo.example.com", Version: "v1alpha1", Kind: "Nginx"}
				if w.GVK != wantGVK {
					t.Errorf("GVK = %v, want %v", w.GVK, wantGVK)
				}
				if w.Chart != "helm-charts/nginx" || w.ChartDir != "operator-sdk/helm-charts/nginx" {
					t.Errorf("Chart, ChartDir = %q, %q; want helm-charts/nginx, operator-sdk/helm-charts/nginx", w.Chart, w.ChartDir)
				}
				if w.WatchDependentResources {
					t.Error("WatchDependentResources = true, want false as written")
				}
				wantValues := map[string]string{
					"image.repository":     "quay.io/mycustomrepo",
					"certValidityDuration": "720h",
					"proxy.image":          "quay.io/example/proxy:v1",
				}
				checkValues(t, w.OverrideValues, wantValues)
				if w.ReconcilePeriod != 5*time.Second {
					t.Errorf("ReconcilePeriod = %v, want 5s", w.ReconcilePeriod)
				}
				if w.MaxConcurrentReconciles != 2 {
					t.Errorf("MaxConcurrentReconciles = %d, want 2", w.MaxConcurrentReconciles)
				}
				checkSelector(t, w.Selector, labels.Set{"app": "nginx", "tier": "edge"}, true)
				checkSelector(t, w.Selector, labels.Set{"app": "nginx", "tier": "backend"}, false)
				checkSelector(t, w.Selector, labels.Set{"tier": "edge"}, false)
				if _, err := w.LoadChart(); err != nil {
					t.Errorf("LoadChart: %v", err)
				}
				checkDefaults(t, got[1])
			},
		},
		{
			name: "rudder's own fields, chart relative to the watches file",
			fsys: os.DirFS("testdata"),
			file: "rudder/watches.yaml",
			check: func(t *testing.T, got []watches.Watch) {
				w := got[0]
				if w.ChartDir != "operator-sdk/helm-charts/webapp" {
					t.Errorf("ChartDir = %q, want operator-sdk/helm-charts/webapp", w.ChartDir)
				}
				if strings.Join(w.Hooks, ",") != "dns,backup" {
					t.Errorf("Hooks = %q, want [dns backup]", w.Hooks)
				}
				if w.MaxHistory != 3 {
					t.Errorf("MaxHistory = %d, want 3", w.MaxHistory)
				}
			},
		},
		{
			name: "defaults",
			fsys: fsWith(webApp),
			check: func(t *testing.T, got []watches.Watch) {
				checkDefaults(t, got[0])
				if got[0].OverrideValues != nil || got[0].Hooks != nil {
					t.Errorf("OverrideValues, Hooks = %v, %v; want nil when absent", got[0].OverrideValues, got[0].Hooks)
				}
			},
		},
		{
			name: "remediation and outOfBand",
			fsys: fsWith(webApp + `  remediation:
    strategy: rollback
    maxAttempts: 2
    readinessTimeout: 90s
    installFailure: uninstall
  outOfBand: keep
`),
			check: func(t *testing.T, got []watches.Watch) {
				want := watches.Remediation{Strategy: watches.StrategyRollback, MaxAttempts: 2,
					ReadinessTimeout: 90 * time.Second, InstallFailure: watches.InstallFailureUninstall}
				if got[0].Remediation != want {
					t.Errorf("Remediation = %+v, want %+v", got[0].Remediation, want)
				}
				if got[0].OutOfBand != watches.OutOfBandKeep {
					t.Errorf("OutOfBand = %q, want keep", got[0].OutOfBand)
				}
			},
		},
		{
			name: "driftDetection with ignore rules",
			fsys: fsWith(webApp + `  driftDetection:
    mode: warn
    ignore:
    - paths: [/spec/replicas, "/metadata/annotations/example.com~1owner"]
      target: {kind: Deployment}
    - paths: [/spec/template/spec/containers/0/resources]
      target: {kind: Deployment, name: web}
`),
			check: func(t *testing.T, got []watches.Watch) {
				d := got[0].Drift
				if d.Mode != watches.DriftWarn || len(d.Ignore) != 2 {
					t.Fatalf("Drift = %+v, want mode warn and two rules", d)
				}
				if g := d.Ignored("Deployment", "other"); len(g) != 2 || fmt.Sprintf("%q", []string(g[1])) != `["metadata" "annotations" "example.com/owner"]` {
					t.Errorf("Ignored(Deployment, other) = %v, want the first rule's paths, unescaped", g)
				}
				if g := d.Ignored("Deployment", "web"); len(g) != 3 || g[1].String() != "/metadata/annotations/example.com~1owner" {
					t.Errorf("Ignored(Deployment, web) = %v, want both rules' three paths, written back escaped", g)
				}
				if g := d.Ignored("Service", "web"); g != nil {
					t.Errorf("Ignored(Service, web) = %v, want none", g)
				}
			},
		},
		{
			name: "valuesFrom",
			fsys: fsWith(webApp + "  valuesFrom:\n    - {kind: ConfigMap, name: defaults}\n    - {kind: Secret, name: db, valuesKey: password, targetPath: config.PW, optional: true}\n"),
			check: func(t *testing.T, got []watches.Watch) {
				if v := got[0].ValuesFrom; len(v) != 2 || v[0].Name != "defaults" || v[1].TargetPath != "config.PW" || !v[1].Optional {
					t.Errorf("ValuesFrom = %+v, want the two sources as written", v)
				}
			},
		},
		{
			name: "clusterScoped",
			fsys: fsWith(webApp + "  clusterScoped:\n    - {group: rbac.authorization.k8s.io, kind: ClusterRole}\n"),
			check: func(t *testing.T, got []watches.Watch) {
				want := []schema.GroupKind{{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}}
				if !reflect.DeepEqual(got[0].ClusterScoped, want) {
					t.Errorf("ClusterScoped = %v, want %v", got[0].ClusterScoped, want)
				}
			},
		},
		{
			name: "test",
			fsys: fsWith(webApp + "  test:\n    enable: true\n    timeout: 90s\n    ignoreFailures: true\n"),
			check: func(t *testing.T, got []watches.Watch) {
				want := watches.Test{Enable: true, Timeout: 90 * time.Second, IgnoreFailures: true}
				if got[0].Test != want {
					t.Errorf("Test = %+v, want %+v", got[0].Test, want)
				}
			},
		},
		{
			name: "remediation given in part takes the defaults for the rest",
			fsys: fsWith(webApp + "  remediation:\n    readinessTimeout: \"0\"\n"),
			check: func(t *testing.T, got []watches.Watch) {
				checkDefaults(t, got[0])
			},
		},
		{
			name: "nulls take the defaults",
			fsys: fsWith(webApp + "  maxHistory: null\n  selector: null\n  watchDependentResources: null\n  remediation: null\n  outOfBand: null\n  test: null\n"),
			check: func(t *testing.T, got []watches.Watch) {
				checkDefaults(t, got[0])
			},
		},
		{
			name: "zero reconcilePeriod and empty selector",
			fsys: fsWith(webApp + "  reconcilePeriod: 0s\n  selector: {}\n"),
			check: func(t *testing.T, got []watches.Watch) {
				checkDefaults(t, got[0])
			},
		},
		{
			name: "environment and templates in overrideValues",
			fsys: fsWith(webApp + `  overrideValues:
    image.repository: $RUDDER_TEST_IMAGE
    image.tag: ${RUDDER_TEST_TAG}-debug
    fromTemplate: '{{ env "RUDDER_TEST_IMAGE" }}:{{ "latest" | upper }}'
    unset: $RUDDER_TEST_UNSET
    plain: "3"
`),
			check: func(t *testing.T, got []watches.Watch) {
				checkValues(t, got[0].OverrideValues, map[string]string{
					"image.repository": "registry.example.com/app",
					"image.tag":        "v2-debug",
					"fromTemplate":     "registry.example.com/app:LATEST",
					"unset":            "",
					"plain":            "3",
				})
			},
		},
		{
			name: "chart path relative to a watches file in a subdirectory",
			fsys: func() fs.FS {
				fsys := appChart("charts/app")
				fsys["config/watches.yaml"] = &fstest.MapFile{Data: []byte(strings.ReplaceAll(webApp, "charts/app", "../charts/app"))}
				return fsys
			}(),
			file: "config/watches.yaml",
			check: func(t *testing.T, got []watches.Watch) {
				if got[0].Chart != "../charts/app" || got[0].ChartDir != "charts/app" {
					t.Errorf("Chart, ChartDir = %q, %q; want ../charts/app, charts/app", got[0].Chart, got[0].ChartDir)
				}
			},
		},
		{
			name: "one chart for two kinds, same kind name in no other group",
			fsys: fsWith(webApp + database),
			check: func(t *testing.T, got []watches.Watch) {
				if len(got) != 2 || got[1].GVK.Kind != "Database" {
					t.Errorf("got %v, want WebApp and Database in file order", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := tt.file
			if file == "" {
				file = "watches.yaml"
			}
			got, err := watches.Load(tt.fsys, file)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			tt.check(t, got)
		})
	}
}

func checkDefaults(t *testing.T, w watches.Watch) {
	t.Helper()
	if !w.WatchDependentResources {
		t.Error("WatchDependentResources = false, want the default true")
	}
	if w.ReconcilePeriod != 0 {
		t.Errorf("ReconcilePeriod = %v, want the default 0", w.ReconcilePeriod)
	}
	if w.MaxConcurrentReconciles != 1 {
		t.Errorf("MaxConcurrentReconciles = %d, want the default 1", w.MaxConcurrentReconciles)
	}
	if w.MaxHistory != 10 {
		t.Errorf("MaxHistory = %d, want the default 10", w.MaxHistory)
	}
	wantRemediation := watches.Remediation{Strategy: watches.StrategyRetry, MaxAttempts: watches.DefaultMaxAttempts,
		InstallFailure: watches.InstallFailureKeep}
	if w.Remediation != wantRemediation {
		t.Errorf("Remediation = %+v, want the defaults %+v", w.Remediation, wantRemediation)
	}
	if w.OutOfBand != watches.OutOfBandRevert {
		t.Errorf("OutOfBand = %q, want the default revert", w.OutOfBand)
	}
	if want := (watches.Test{Timeout: watches.DefaultTestTimeout}); w.Test != want {
		t.Errorf("Test = %+v, want the default %+v", w.Test, want)
	}
	if w.Selector == nil || !w.Selector.Empty() {
		t.Errorf("Selector = %v, want everything", w.Selector)
	}
	if w.ChartFS == nil || w.ChartDir == "" {
		t.Errorf("ChartFS, ChartDir = %v, %q; want the chart's location", w.ChartFS, w.ChartDir)
	}
}

func checkValues(t *testing.T, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("OverrideValues = %q, want %q", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("OverrideValues[%q] = %q, want %q", k, got[k], v)
		}
	}
}

func checkSelector(t *testing.T, sel labels.Selector, set labels.Set, want bool) {
	t.Helper()
	if sel.Matches(set) != want {
		t.Errorf("selector %q matches %v = %v, want %v", sel, set, !want, want)
	}
}

func TestLoad_Errors(t *testing.T) {
	t.Setenv("RUDDER_TEST_SECRET", "s3cr3t")

	tests := []struct {
		name string
		fsys fs.FS  // default fsWith(yaml)
		yaml string // the watches file
		// wantFields are the fields of the EntryErrors, in order; none for an error about the whole file.
		wantFields []string
		// want are parts of the error message.
		want []string
		// wantIs is a sentinel error the error must wrap.
		wantIs error
		// wantExact is the whole message, when set.
		wantExact string
	}{
		// The file as a whole.
		{name: "empty file", yaml: "", want: []string{"watches.yaml: no kinds"}, wantIs: watches.ErrNoKinds},
		{name: "only comments", yaml: "# nothing yet\n", want: []string{"no kinds"}, wantIs: watches.ErrNoKinds},
		{name: "empty list", yaml: "[]\n", want: []string{"no kinds"}, wantIs: watches.ErrNoKinds},
		{name: "not a list", yaml: "group: webapp.my.domain\n", want: []string{"watches.yaml: got a mapping, want a YAML list of entries"}},
		{name: "not YAML", yaml: "- group: [\n", want: []string{"not valid YAML"}},
		{name: "duplicate key", yaml: webApp + "  kind: Other\n", want: []string{"not valid YAML", `"kind"`}},
		{
			name:       "missing file",
			fsys:       fstest.MapFS{},
			want:       []string{"read watches file", "watches.yaml"},
			wantIs:     fs.ErrNotExist,
			wantFields: nil,
		},

		// Decoding an entry.
		{name: "entry not a mapping", yaml: "- WebApp\n", wantFields: []string{""}, want: []string{"entry 1 (no group, version or kind)", "want a mapping"}},
		{
			name:       "unknown field",
			yaml:       webApp + "  chartVersion: 1.0.0\n",
			wantFields: []string{"chartVersion"},
			want:       []string{`watches.yaml entry 1 (webapp.my.domain/v1, Kind=WebApp): field "chartVersion": unknown field`, "maxHistory"},
		},
		{
			name:       "field in the wrong case",
			yaml:       webApp + "  MaxHistory: 3\n",
			wantFields: []string{"MaxHistory"},
			want:       []string{`did you mean "maxHistory"`},
		},
		{
			name:       "unknown field in selector",
			yaml:       webApp + "  selector:\n    matchLabel:\n      app: web\n",
			wantFields: []string{"selector"},
			want:       []string{`field "selector": unknown field "matchLabel"`},
		},
		{
			name:       "wrong type",
			yaml:       webApp + "  maxHistory: ten\n",
			wantFields: []string{"maxHistory"},
			want:       []string{`field "maxHistory": got a string, want a whole number`},
		},
		{
			name:       "unquoted number in overrideValues",
			yaml:       webApp + "  overrideValues:\n    replicas: 3\n",
			wantFields: []string{"overrideValues.replicas"},
			want:       []string{`field "overrideValues.replicas": got a number, want a string (put numbers and booleans in quotes`},
		},
		{
			name:       "every problem reported",
			yaml:       webApp + "  maxHistory: ten\n  hook: [dns]\n" + database + "  reconcilePeriod: soon\n",
			wantFields: []string{"hook", "maxHistory", "reconcilePeriod"},
			want:       []string{"entry 1 (webapp.my.domain/v1, Kind=WebApp)", "entry 2 (db.my.domain/v1beta1, Kind=Database)"},
		},

		// group, version, kind.
		{
			name:       "missing group",
			yaml:       strings.Replace(webApp, "group: webapp.my.domain", "group: ''", 1),
			wantFields: []string{"group"},
			want:       []string{`field "group": missing`, `core group ""`},
		},
		{
			name:       "group not a DNS subdomain",
			yaml:       strings.Replace(webApp, "webapp.my.domain", "WebApp.my_domain", 1),
			wantFields: []string{"group"},
			want:       []string{`field "group": "WebApp.my_domain" is not a valid API group`, "lower-case domain name"},
		},
		{
			name:       "group without a dot",
			yaml:       strings.Replace(webApp, "webapp.my.domain", "webapp", 1),
			wantFields: []string{"group"},
			want:       []string{`"webapp" has no dot`, `"webapp.example.com"`},
		},
		{
			name:       "missing version",
			yaml:       strings.Replace(webApp, "  version: v1\n", "", 1),
			wantFields: []string{"version"},
			want:       []string{`field "version": missing`},
		},
		{
			name:       "version not a Kubernetes version",
			yaml:       strings.Replace(webApp, "version: v1", "version: v1.0", 1),
			wantFields: []string{"version"},
			want:       []string{`"v1.0" is not a Kubernetes API version`, "v1alpha1"},
		},
		{
			name:       "version with a zero major",
			yaml:       strings.Replace(webApp, "version: v1", "version: v0beta1", 1),
			wantFields: []string{"version"},
			want:       []string{`"v0beta1" is not a Kubernetes API version`},
		},
		{
			name:       "missing kind",
			yaml:       strings.Replace(webApp, "  kind: WebApp\n", "", 1),
			wantFields: []string{"kind"},
			want:       []string{`field "kind": missing`},
		},
		{
			name:       "kind not UpperCamelCase",
			yaml:       strings.Replace(webApp, "kind: WebApp", "kind: web-app", 1),
			wantFields: []string{"kind"},
			want:       []string{`"web-app" is not UpperCamelCase`},
		},
		{
			name:       "same group and kind in two versions",
			yaml:       webApp + strings.Replace(webApp, "version: v1", "version: v2", 1),
			wantFields: []string{"kind"},
			want: []string{
				"entry 2 (webapp.my.domain/v2, Kind=WebApp): field \"kind\": entry 1 (webapp.my.domain/v1, Kind=WebApp) serves WebApp.webapp.my.domain already",
				"remove one",
			},
		},
		{
			name:       "same kind in two groups",
			yaml:       webApp + strings.Replace(webApp, "webapp.my.domain", "shop.my.domain", 1),
			wantFields: []string{"kind"},
			want:       []string{"entry 2 (shop.my.domain/v1, Kind=WebApp)", "entry 1 (webapp.my.domain/v1, Kind=WebApp) has the same kind", "rename one kind"},
		},
		{
			name:       "kinds differing only in case",
			yaml:       webApp + strings.Replace(database, "kind: Database", "kind: WEBAPP", 1),
			wantFields: []string{"kind"},
			want:       []string{"entry 2 (db.my.domain/v1beta1, Kind=WEBAPP)", "has the same kind"},
		},

		// chart.
		{
			name:       "missing chart",
			yaml:       strings.Replace(webApp, "  chart: charts/app\n", "", 1),
			wantFields: []string{"chart"},
			want:       []string{`field "chart": missing`},
		},
		{
			name:       "no Chart.yaml where the chart should be",
			yaml:       strings.Replace(webApp, "charts/app", "charts/missing", 1),
			wantFields: []string{"chart"},
			want:       []string{`no chart at "charts/missing": charts/missing/Chart.yaml does not exist`},
		},
		{
			name:       "absolute chart path in a file system",
			yaml:       strings.Replace(webApp, "charts/app", "/opt/helm/charts/app", 1),
			wantFields: []string{"chart"},
			want:       []string{`"/opt/helm/charts/app" is an absolute path`, "relative to the watches file's directory"},
		},
		{
			name:       "chart path leaving the file system",
			yaml:       strings.Replace(webApp, "charts/app", "../charts/app", 1),
			wantFields: []string{"chart"},
			want:       []string{`"../charts/app" leads out of the file system`},
		},
		{
			name: "chart that does not load",
			fsys: func() fs.FS {
				fsys := fsWith(webApp)
				fsys["charts/app/Chart.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: v2\nname: app\n")}
				return fsys
			}(),
			wantFields: []string{"chart"},
			want:       []string{"the chart in charts/app does not load", "version is required", "helm lint charts/app"},
		},

		// The other fields.
		{
			name:       "unknown remediation strategy",
			yaml:       webApp + "  remediation:\n    strategy: Rollback\n",
			wantFields: []string{"remediation.strategy"},
			want:       []string{`field "remediation.strategy": "Rollback" is not one of retry, rollback`, "case sensitive", "default retry"},
		},
		{
			name:       "remediation maxAttempts below one",
			yaml:       webApp + "  remediation:\n    maxAttempts: 0\n",
			wantFields: []string{"remediation.maxAttempts"},
			want:       []string{`field "remediation.maxAttempts": 0 is less than 1`, "default 3"},
		},
		{
			name:       "readinessTimeout not a duration",
			yaml:       webApp + "  remediation:\n    readinessTimeout: 5 minutes\n",
			wantFields: []string{"remediation.readinessTimeout"},
			want:       []string{`"5 minutes" is not a duration`, `"5m"`, `"0" for no timeout`},
		},
		{
			name:       "negative readinessTimeout",
			yaml:       webApp + "  remediation:\n    readinessTimeout: -1m\n",
			wantFields: []string{"remediation.readinessTimeout"},
			want:       []string{`"-1m" is negative`},
		},
		{
			name:       "unknown installFailure",
			yaml:       webApp + "  remediation:\n    installFailure: delete\n",
			wantFields: []string{"remediation.installFailure"},
			want:       []string{`"delete" is not one of keep, uninstall`},
		},
		{
			name:       "unknown field in remediation",
			yaml:       webApp + "  remediation:\n    retries: 3\n",
			wantFields: []string{"remediation"},
			want:       []string{`field "remediation": unknown field "retries"`},
		},
		{
			name:       "remediation not a mapping",
			yaml:       webApp + "  remediation: rollback\n",
			wantFields: []string{"remediation"},
			want:       []string{`field "remediation": got a string, want a mapping`},
		},
		{
			name:       "unknown outOfBand policy",
			yaml:       webApp + "  outOfBand: ignore\n",
			wantFields: []string{"outOfBand"},
			want:       []string{`field "outOfBand": "ignore" is not one of revert, keep`, "default revert"},
		},
		{
			name:       "valuesFrom source of no known kind, without a name",
			yaml:       webApp + "  valuesFrom:\n    - {kind: configmap}\n",
			wantFields: []string{"valuesFrom[0].kind", "valuesFrom[0].name"},
			want:       []string{`"configmap" is neither ConfigMap nor Secret`, "empty; name the ConfigMap or Secret"},
		},
		{
			name:       "valuesFrom source with an unknown field",
			yaml:       webApp + "  valuesFrom:\n    - {kind: Secret, name: db, key: password}\n",
			wantFields: []string{"valuesFrom"},
			want:       []string{`unknown field "key"`},
		},
		{
			name:       "clusterScoped kind without a kind",
			yaml:       webApp + "  clusterScoped:\n    - {group: rbac.authorization.k8s.io}\n",
			wantFields: []string{"clusterScoped[0].kind"},
			want:       []string{"is empty; name a cluster-scoped kind the chart renders"},
		},
		{
			name:       "unknown driftDetection mode",
			yaml:       webApp + "  driftDetection:\n    mode: Warn\n",
			wantFields: []string{"driftDetection.mode"},
			want:       []string{`"Warn" is not one of enabled, warn, disabled`, "case sensitive", "default enabled"},
		},
		{
			name:       "test timeout not a positive duration",
			yaml:       webApp + "  test:\n    enable: true\n    timeout: five\n",
			wantFields: []string{"test.timeout"},
			want:       []string{`"five" is not a duration`, `such as "90s" or "5m"`},
		},
		{
			name:       "test enable not a boolean",
			yaml:       webApp + "  test:\n    enable: yes please\n",
			wantFields: []string{"test.enable"},
			want:       []string{"got a string, want true or false"},
		},
		{
			name:       "test timeout zero",
			yaml:       webApp + "  test:\n    timeout: 0s\n",
			wantFields: []string{"test.timeout"},
			want:       []string{`"0s" is not positive`, "leave the field out for 5m0s"},
		},
		{
			name:       "ignore path not a JSON pointer",
			yaml:       webApp + "  driftDetection:\n    ignore:\n    - paths: [/spec/replicas, spec.replicas]\n",
			wantFields: []string{"driftDetection.ignore[0].paths[1]"},
			want:       []string{`"spec.replicas" does not start with /`, "JSON pointer such as /spec/replicas"},
		},
		{
			name:       "ignore path with a bad escape or a list end",
			yaml:       webApp + "  driftDetection:\n    ignore:\n    - paths: [/metadata/labels/a~2b, /spec/template/spec/containers/-]\n",
			wantFields: []string{"driftDetection.ignore[0].paths[0]", "driftDetection.ignore[0].paths[1]"},
			want:       []string{"~0 (for ~) or ~1 (for /)", `"-", which names no element of a list`},
		},
		{
			name:       "ignore rule without paths, target naming nothing",
			yaml:       webApp + "  driftDetection:\n    ignore:\n    - target: {}\n",
			wantFields: []string{"driftDetection.ignore[0].paths", "driftDetection.ignore[0].target"},
			want:       []string{"no paths; list the JSON pointers", "names neither a kind nor a name"},
		},
		{
			name:       "unknown field in an ignore target",
			yaml:       webApp + "  driftDetection:\n    ignore:\n    - paths: [/spec/replicas]\n      target: {kind: Deployment, namespace: x}\n",
			wantFields: []string{"driftDetection"},
			want:       []string{`unknown field "namespace"`},
		},
		{
			name:       "malformed selector operator",
			yaml:       webApp + "  selector:\n    matchExpressions:\n      - {key: tier, operator: Near, values: [web]}\n",
			wantFields: []string{"selector"},
			want:       []string{`field "selector"`, `"Near" is not a valid label selector operator`},
		},
		{
			name:       "malformed selector key",
			yaml:       webApp + "  selector:\n    matchLabels:\n      bad key: web\n",
			wantFields: []string{"selector"},
			want:       []string{`field "selector"`, "bad key"},
		},
		{
			name:       "malformed selector value",
			yaml:       webApp + "  selector:\n    matchLabels:\n      app: not a value\n",
			wantFields: []string{"selector"},
			want:       []string{`field "selector"`, "not a value"},
		},
		{
			name:       "reconcilePeriod not a duration",
			yaml:       database + webApp + "  reconcilePeriod: 5x\n",
			wantFields: []string{"reconcilePeriod"},
			wantExact:  `watches.yaml entry 2 (webapp.my.domain/v1, Kind=WebApp): field "reconcilePeriod": "5x" is not a duration; use a Go duration such as "30s" or "5m"`,
		},
		{
			name:       "negative reconcilePeriod",
			yaml:       webApp + "  reconcilePeriod: -5s\n",
			wantFields: []string{"reconcilePeriod"},
			want:       []string{`field "reconcilePeriod": "-5s" is negative`},
		},
		{
			name:       "reconcilePeriod as a number",
			yaml:       webApp + "  reconcilePeriod: 30\n",
			wantFields: []string{"reconcilePeriod"},
			want:       []string{`field "reconcilePeriod": got a number, want a string`},
		},
		{
			name:       "maxConcurrentReconciles below 1",
			yaml:       webApp + "  maxConcurrentReconciles: 0\n",
			wantFields: []string{"maxConcurrentReconciles"},
			want:       []string{`field "maxConcurrentReconciles": 0 is less than 1`, "default 1"},
		},
		{
			name:       "maxHistory below 1",
			yaml:       webApp + "  maxHistory: -1\n",
			wantFields: []string{"maxHistory"},
			want:       []string{`field "maxHistory": -1 is less than 1`, "default 10"},
		},
		{
			name:       "empty hook name",
			yaml:       webApp + "  hooks: [dns, '']\n",
			wantFields: []string{"hooks[1]"},
			want:       []string{`field "hooks[1]": empty hook name`},
		},
		{
			name:       "null hook name",
			yaml:       webApp + "  hooks:\n    -\n",
			wantFields: []string{"hooks[0]"},
			want:       []string{`field "hooks[0]": empty hook name`},
		},
		{
			name:       "duplicate hook",
			yaml:       webApp + "  hooks: [dns, backup, dns]\n",
			wantFields: []string{"hooks[2]"},
			want:       []string{`field "hooks[2]": "dns" is listed already as hooks[0]`},
		},
		{
			name:       "hooks not a list",
			yaml:       webApp + "  hooks: dns\n",
			wantFields: []string{"hooks"},
			want:       []string{`field "hooks": got a string, want a list`},
		},
		{
			name:       "overrideValues template that does not parse",
			yaml:       webApp + "  overrideValues:\n    image: '{{ .Image'\n",
			wantFields: []string{"overrideValues.image"},
			want:       []string{`field "overrideValues.image": "{{ .Image" does not parse`},
		},
		{
			name:       "overrideValues template that fails",
			yaml:       webApp + "  overrideValues:\n    image: '{{ fail \"set IMAGE\" }}'\n",
			wantFields: []string{"overrideValues.image"},
			want:       []string{`field "overrideValues.image"`, "fails to render", "set IMAGE"},
		},
		{
			name:       "overrideValues error hides values from the environment",
			yaml:       webApp + "  overrideValues:\n    token: '{{ $RUDDER_TEST_SECRET }}'\n",
			wantFields: []string{"overrideValues.token"},
			want:       []string{`"{{ $RUDDER_TEST_SECRET }}" does not parse`, `function "${RUDDER_TEST_SECRET}" not defined`},
		},
		{
			name:       "overrideValues error shows the value before expansion",
			yaml:       webApp + "  overrideValues:\n    token: '$RUDDER_TEST_SECRET {{'\n",
			wantFields: []string{"overrideValues.token"},
			want:       []string{`"$RUDDER_TEST_SECRET {{" does not parse`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := tt.fsys
			if fsys == nil {
				fsys = fsWith(tt.yaml)
			}
			got, err := watches.Load(fsys, "watches.yaml")
			if err == nil {
				t.Fatalf("Load = %v, want an error", got)
			}
			t.Log(err)
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("error %q shows a value from the environment", err)
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q\ndoes not contain %q", err, want)
				}
			}
			if tt.wantExact != "" && err.Error() != tt.wantExact {
				t.Errorf("error %q\nwant      %q", err, tt.wantExact)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %q does not wrap %v", err, tt.wantIs)
			}
			var fields []string
			for _, e := range entryErrors(err) {
				fields = append(fields, e.Field)
			}
			if strings.Join(fields, ",") != strings.Join(tt.wantFields, ",") || len(fields) != len(tt.wantFields) {
				t.Errorf("error fields = %q, want %q; error:\n%v", fields, tt.wantFields, err)
			}
		})
	}
}

// entryErrors returns the EntryErrors in err, a single one or a join of them.
func entryErrors(err error) []*watches.EntryError {
	errs := []error{err}
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		errs = joined.Unwrap()
	}
	var out []*watches.EntryError
	for _, e := range errs {
		var entryErr *watches.EntryError
		if errors.As(e, &entryErr) {
			out = append(out, entryErr)
		}
	}
	return out
}

func TestLoadFile(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T) (file string)
		wantErr []string
	}{
		{
			name:  "relative chart paths resolve against the file's directory",
			setup: func(*testing.T) string { return "testdata/operator-sdk/watches.yaml" },
		},
		{
			name: "relative chart path out of the file's directory",
			setup: func(t *testing.T) string {
				root := t.TempDir()
				writeChart(t, filepath.Join(root, "charts"))
				return writeWatches(t, filepath.Join(root, "config", "watches.yaml"), "../charts/app")
			},
		},
		{
			name: "absolute chart path",
			setup: func(t *testing.T) string {
				charts := t.TempDir()
				writeChart(t, charts)
				return writeWatches(t, filepath.Join(t.TempDir(), "watches.yaml"), filepath.ToSlash(filepath.Join(charts, "app")))
			},
		},
		{
			name: "absolute chart path without a chart",
			setup: func(t *testing.T) string {
				return writeWatches(t, filepath.Join(t.TempDir(), "watches.yaml"), "/nonexistent/charts/app")
			},
			wantErr: []string{`field "chart"`, filepath.FromSlash("/nonexistent/charts/app/Chart.yaml") + " does not exist"},
		},
		{
			name:    "missing watches file",
			setup:   func(t *testing.T) string { return filepath.Join(t.TempDir(), "watches.yaml") },
			wantErr: []string{"read watches file", "watches.yaml"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := tt.setup(t)
			got, err := watches.LoadFile(file)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("LoadFile = %v, want an error", got)
				}
				for _, want := range tt.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q\ndoes not contain %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadFile: %v", err)
			}
			for _, w := range got {
				c, err := w.LoadChart()
				if err != nil {
					t.Errorf("%s: LoadChart: %v", w.GVK.Kind, err)
					continue
				}
				if want := filepath.Base(filepath.FromSlash(w.Chart)); c.Name() != want || w.ChartDir != want {
					t.Errorf("%s: chart %q in ChartDir %q, want %q in both", w.GVK.Kind, c.Name(), w.ChartDir, want)
				}
			}
		})
	}
}

// writeChart writes the chart of appChart into dir/app.
func writeChart(t *testing.T, dir string) {
	t.Helper()
	for name, f := range appChart("app") {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), f.Data)
	}
}

// writeWatches writes the webApp entry, with chart as its chart, to the watches file path and returns path.
func writeWatches(t *testing.T, path, chart string) string {
	t.Helper()
	writeFile(t, path, []byte(strings.Replace(webApp, "charts/app", chart, 1)))
	return path
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
