package helm

import (
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
)

func TestLoadChart(t *testing.T) {
	const charts = "../watches/testdata/operator-sdk/helm-charts"
	tests := []struct {
		name    string
		fsys    fs.FS
		dir     string
		check   func(t *testing.T, c *chart.Chart)
		wantErr string
	}{
		{
			name: "chart on disk loads as helm loads it",
			fsys: os.DirFS(charts),
			dir:  "nginx",
			check: func(t *testing.T, c *chart.Chart) {
				checkSameAsLoadDir(t, c, charts+"/nginx")
				checkHas(t, "templates", names(c.Templates), "templates/_helpers.tpl", "templates/deployment.yaml")
				checkHas(t, "files", names(c.Files), ".helmignore", "README.md")
				checkLacks(t, "files", names(c.Raw), "README.bak", "templates/.scratch.yaml")
				if c.Values["replicaCount"] != float64(1) {
					t.Errorf("values = %v, want replicaCount 1", c.Values)
				}
			},
		},
		{
			name: "chart with a subchart",
			fsys: os.DirFS(charts),
			dir:  "webapp",
			check: func(t *testing.T, c *chart.Chart) {
				checkSameAsLoadDir(t, c, charts+"/webapp")
				deps := c.Dependencies()
				if len(deps) != 1 || deps[0].Name() != "redis" {
					t.Fatalf("subcharts = %v, want redis", deps)
				}
				checkHas(t, "subchart templates", names(deps[0].Templates), "templates/_helpers.tpl", "templates/service.yaml")
				checkHas(t, "templates", names(c.Templates), "templates/_helpers.tpl", "templates/configmap.yaml")
			},
		},
		{
			name: "chart deep in a file system",
			fsys: os.DirFS("../watches/testdata"),
			dir:  "operator-sdk/helm-charts/webapp",
			check: func(t *testing.T, c *chart.Chart) {
				checkSameAsLoadDir(t, c, charts+"/webapp")
			},
		},
		{
			name: "in-memory chart keeps _helpers.tpl and honors .helmignore",
			fsys: func() fs.FS {
				fsys := appChart("app")
				fsys["app/.helmignore"] = &fstest.MapFile{Data: []byte("# comment\nsecrets/\n*.swp\n")}
				fsys["app/secrets/key.txt"] = &fstest.MapFile{Data: []byte("key")}
				fsys["app/templates/configmap.yaml.swp"] = &fstest.MapFile{Data: []byte("swap")}
				fsys["app/templates/.hidden.yaml"] = &fstest.MapFile{Data: []byte("hidden")}
				fsys["app/files/.keep"] = &fstest.MapFile{Data: []byte("kept")}
				return fsys
			}(),
			dir: "app",
			check: func(t *testing.T, c *chart.Chart) {
				checkHas(t, "templates", names(c.Templates), "templates/_helpers.tpl", "templates/configmap.yaml")
				checkHas(t, "files", names(c.Files), ".helmignore", "files/.keep")
				checkLacks(t, "files", names(c.Raw), "secrets/key.txt", "templates/configmap.yaml.swp", "templates/.hidden.yaml")
			},
		},
		{
			name: "UTF-8 byte order mark dropped",
			fsys: func() fs.FS {
				fsys := appChart("app")
				fsys["app/Chart.yaml"].Data = append([]byte("\xEF\xBB\xBF"), fsys["app/Chart.yaml"].Data...)
				return fsys
			}(),
			dir: "app",
			check: func(t *testing.T, c *chart.Chart) {
				if c.Name() != "app" {
					t.Errorf("chart name = %q, want app", c.Name())
				}
			},
		},
		{
			name:    "no Chart.yaml",
			fsys:    fstest.MapFS{"app/templates/cm.yaml": {Data: []byte("kind: ConfigMap")}},
			dir:     "app",
			wantErr: "load chart app: Chart.yaml file is missing",
		},
		{
			name:    "invalid Chart.yaml",
			fsys:    fstest.MapFS{"app/Chart.yaml": {Data: []byte("apiVersion: v2\nname: [app\n")}},
			dir:     "app",
			wantErr: "cannot load Chart.yaml",
		},
		{
			name:    "no such directory",
			fsys:    fstest.MapFS{},
			dir:     "app",
			wantErr: "load chart app: open app: file does not exist",
		},
		{
			name:    "directory outside the file system",
			fsys:    fstest.MapFS{},
			dir:     "../app",
			wantErr: "invalid argument",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := LoadChart(tt.fsys, tt.dir)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("LoadChart error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadChart: %v", err)
			}
			tt.check(t, c.chart)
		})
	}
}

func TestLoadChart_Fresh(t *testing.T) {
	fsys := os.DirFS("../watches/testdata/operator-sdk/helm-charts")
	a, errA := LoadChart(fsys, "webapp")
	b, errB := LoadChart(fsys, "webapp")
	if errA != nil || errB != nil {
		t.Fatalf("LoadChart: %v, %v", errA, errB)
	}
	if a == b || a.chart.Dependencies()[0] == b.chart.Dependencies()[0] {
		t.Error("two loads share a chart; Helm changes charts while installing, so each load must be new")
	}
}

// checkSameAsLoadDir checks that c has the files helm's loader.LoadDir finds in dir on disk.
func checkSameAsLoadDir(t *testing.T, c *chart.Chart, dir string) {
	t.Helper()
	want, err := loader.LoadDir(dir)
	if err != nil {
		t.Fatalf("loader.LoadDir: %v", err)
	}
	var check func(where string, got, want *chart.Chart)
	check = func(where string, got, want *chart.Chart) {
		for _, part := range []struct {
			name      string
			got, want []*common.File
		}{{"raw", got.Raw, want.Raw}, {"templates", got.Templates, want.Templates}, {"files", got.Files, want.Files}} {
			if g, w := sorted(names(part.got)), sorted(names(part.want)); !slices.Equal(g, w) {
				t.Errorf("%s %s = %q, helm loads %q", where, part.name, g, w)
			}
		}
		if len(got.Dependencies()) != len(want.Dependencies()) {
			t.Errorf("%s has %d subcharts, helm loads %d", where, len(got.Dependencies()), len(want.Dependencies()))
			return
		}
		for i, dep := range got.Dependencies() {
			check(path.Join(where, "charts", dep.Name()), dep, want.Dependencies()[i])
		}
	}
	check(c.Name(), c, want)
}

func names(files []*common.File) []string {
	out := make([]string, 0, len(files))
	for _, f := range files {
		out = append(out, f.Name)
	}
	return out
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

func checkHas(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s %q lack %q", what, got, w)
		}
	}
}

func checkLacks(t *testing.T, what string, got []string, unwanted ...string) {
	t.Helper()
	for _, u := range unwanted {
		if slices.Contains(got, u) {
			t.Errorf("%s %q have %q, which should be ignored", what, got, u)
		}
	}
}

// appChart is a small chart in directory dir of a file system.
func appChart(dir string) fstest.MapFS {
	return fstest.MapFS{
		dir + "/Chart.yaml":               {Data: []byte("apiVersion: v2\nname: app\nversion: 0.1.0\n")},
		dir + "/templates/_helpers.tpl":   {Data: []byte(`{{- define "app.name" -}}{{ .Chart.Name }}{{- end -}}`)},
		dir + "/templates/configmap.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ include \"app.name\" . }}\n")},
	}
}
