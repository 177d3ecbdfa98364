package helm

import (
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
)

// rudder's validation of values, with each schema compiled once, answers what
// Helm's own would, error text and all, for the charts rudder embeds.
func TestSchemas_ValidateAsHelmDoes(t *testing.T) {
	tests := []struct {
		chart   string
		vals    map[string]any
		invalid bool
	}{
		{chart: "webapp", vals: map[string]any{"image": "nginx:1.25", "port": int64(80)}},
		{chart: "webapp", vals: map[string]any{"image": "nginx:1.25", "port": "eighty"}, invalid: true},
		{chart: "webapp", vals: map[string]any{"port": int64(80)}}, // the chart's default image
		{chart: "webapp", vals: map[string]any{"image": "nginx:1.25", "port": int64(80), "replicas": int64(-1), "unknown": true}, invalid: true},
		{chart: "network", vals: map[string]any{"name": 3}},
		{chart: "database", vals: map[string]any{"version": "15", "storage": map[string]any{"size": "1Gi"}}},
		{chart: "database", vals: map[string]any{"version": 15}, invalid: true},
	}
	s := &schemas{}
	for _, tt := range tests {
		chrt, err := loader.Load("../../charts/" + tt.chart)
		if err != nil {
			t.Fatal(err)
		}
		_, helmErr := chartutil.ToRenderValuesWithSchemaValidation(chrt, tt.vals, chartutil.ReleaseOptions{Name: "r", Namespace: "ns"}, chartutil.DefaultCapabilities, false)
		if (helmErr != nil) != tt.invalid {
			t.Fatalf("%s %v: Helm says %v, want invalid %v", tt.chart, tt.vals, helmErr, tt.invalid)
		}
		for range 2 { // compiled, then from the cache
			handled, err := s.validate(chrt, tt.vals)
			if !handled {
				t.Fatalf("%s %v: left to Helm, want validated here", tt.chart, tt.vals)
			}
			if errText(err) != errText(helmErr) {
				t.Errorf("%s %v:\n got %q\nwant %q (Helm's)", tt.chart, tt.vals, errText(err), errText(helmErr))
			}
		}
	}
	if n := len(s.compiled); n != 3 {
		t.Errorf("%d schemas compiled, want one per chart", n)
	}
}

// What rudder cannot validate exactly as Helm does, Helm validates.
func TestSchemas_LeaveToHelm(t *testing.T) {
	sub := &chart.Chart{Metadata: &chart.Metadata{Name: "sub", Version: "1.0.0"}}
	withSub := &chart.Chart{Metadata: &chart.Metadata{Name: "top", Version: "1.0.0"}, Schema: []byte(`{"type":"object"}`)}
	withSub.AddDependency(sub)
	tests := []struct {
		name  string
		chart *chart.Chart
		vals  map[string]any
	}{
		{name: "no schema", chart: &chart.Chart{Metadata: &chart.Metadata{Name: "c"}}, vals: map[string]any{"a": 1}},
		{name: "subcharts", chart: withSub, vals: map[string]any{"a": 1}},
		{name: "a reference to another document", vals: map[string]any{"a": 1},
			chart: &chart.Chart{Metadata: &chart.Metadata{Name: "c"}, Schema: []byte(`{"$ref": "https://example.com/values.json"}`)}},
		{name: "a schema that does not compile", vals: map[string]any{"a": 1},
			chart: &chart.Chart{Metadata: &chart.Metadata{Name: "c"}, Schema: []byte(`{"type": 3}`)}},
		{name: "no values: an upgrade reuses the current revision's",
			chart: &chart.Chart{Metadata: &chart.Metadata{Name: "c"}, Schema: []byte(`{"type":"object"}`)}},
	}
	s := &schemas{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if handled, err := s.validate(tt.chart, tt.vals); handled || err != nil {
				t.Errorf("validate = %v, %v; want it left to Helm", handled, err)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// BenchmarkValuesValidation compares Helm's validation of a WebApp's values,
// which compiles the chart's schema every time, with rudder's.
func BenchmarkValuesValidation(b *testing.B) {
	chrt, err := loader.Load("../../charts/webapp")
	if err != nil {
		b.Fatal(err)
	}
	vals := map[string]any{"image": "nginx:1.25", "port": int64(80), "replicas": int64(2)}
	b.Run("helm", func(b *testing.B) {
		for b.Loop() {
			if err := chartutil.ValidateAgainstSchema(chrt, vals); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rudder", func(b *testing.B) {
		s := &schemas{}
		for b.Loop() {
			if _, err := s.validate(chrt, vals); err != nil {
				b.Fatal(err)
			}
		}
	})
}
