package crdgen

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/internal/hook/backup"
	"github.com/rudder-operator/rudder/internal/watches"
)

const testSchema = `{"type": "object", "required": ["size"], "properties": {
  "size": {"type": "integer", "minimum": 1},
  "labels": {"type": "object", "additionalProperties": {"type": "string"}},
  "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}}}`

// load returns the watch of a Thing (things.example.com/v1) served by a chart with chartYAML and schema (none when
// empty) and the hooks.
func load(t *testing.T, group, chartYAML, schema string, hooks ...string) watches.Watch {
	t.Helper()
	return loadWithValues(t, group, chartYAML, schema, "", hooks...)
}

// loadWithValues is load with the chart's values.yaml (none when empty).
func loadWithValues(t *testing.T, group, chartYAML, schema, values string, hooks ...string) watches.Watch {
	t.Helper()
	fsys := fstest.MapFS{
		"watches.yaml":                   {Data: []byte("- {group: " + group + ", version: v1, kind: Thing, chart: charts/thing, hooks: [" + strings.Join(hooks, ",") + "]}\n")},
		"charts/thing/Chart.yaml":        {Data: []byte("apiVersion: v2\nname: thing\nversion: 0.1.0\ndescription: A thing.\n" + chartYAML)},
		"charts/thing/templates/cm.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")},
	}
	if schema != "" {
		fsys["charts/thing/values.schema.json"] = &fstest.MapFile{Data: []byte(schema)}
	}
	if values != "" {
		fsys["charts/thing/values.yaml"] = &fstest.MapFile{Data: []byte(values)}
	}
	ws, err := watches.Load(fsys, "watches.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return ws[0]
}

func registry(t *testing.T) *hook.Registry {
	t.Helper()
	r := &hook.Registry{}
	for _, h := range []hook.Hook{&backup.Hook{}, &statusHook{name: "clash", key: "phase"}, &statusHook{name: "extra", key: "lastBackup"}} {
		if err := r.Add(h); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// statusHook declares one status key.
type statusHook struct {
	hook.Hook
	name, key string
}

func (h *statusHook) Name() string { return h.name }
func (h *statusHook) StatusSchema() map[string]apiextensionsv1.JSONSchemaProps {
	return map[string]apiextensionsv1.JSONSchemaProps{h.key: {Type: "string"}}
}

func TestGenerator_CRD(t *testing.T) {
	chartYAML := `annotations:
  rudder.dev/short-names: th, t
  rudder.dev/printer-columns: |
    - {name: Size, type: integer, jsonPath: .spec.size}
  rudder.dev/scale: |
    specReplicasPath: .spec.size
    statusReplicasPath: .status.replicas
  rudder.dev/status-schema: |
    lastSync: {type: string, format: date-time}
  rudder.dev/validations: |
    - rule: self.metadata.name != 'default'
      message: no default
  rudder.dev/name-schema: |
    type: string
    maxLength: 40
`
	g := &Generator{Hooks: registry(t)}
	crd, err := g.CRD(load(t, "things.example.com", chartYAML, testSchema, "backup"))
	if err != nil {
		t.Fatal(err)
	}
	names := crd.Spec.Names
	if crd.Name != "things.things.example.com" || names.Plural != "things" || names.Singular != "thing" ||
		names.ListKind != "ThingList" || strings.Join(names.ShortNames, ",") != "th,t" || strings.Join(names.Categories, ",") != "rudder" {
		t.Errorf("names: %s %+v", crd.Name, names)
	}
	v := crd.Spec.Versions[0]
	if len(v.AdditionalPrinterColumns) != 2 || v.AdditionalPrinterColumns[1].Name != "Age" {
		t.Errorf("columns: %+v, want Size then Age", v.AdditionalPrinterColumns)
	}
	if v.Subresources.Scale == nil || v.Subresources.Scale.SpecReplicasPath != ".spec.size" || v.Subresources.Status == nil {
		t.Errorf("subresources: %+v", v.Subresources)
	}
	root := v.Schema.OpenAPIV3Schema
	status := root.Properties["status"].Properties
	for _, key := range []string{"phase", "conditions", "release", "history", "lastBackup", "lastSync"} {
		if _, ok := status[key]; !ok {
			t.Errorf("status has no %s", key)
		}
	}
	if root.Description != "A thing." || strings.Join(root.Required, ",") != "spec" || len(root.XValidations) != 1 ||
		*root.Properties["metadata"].Properties["name"].MaxLength != 40 {
		t.Errorf("root: %+v", root)
	}
	if got := root.Properties["spec"].Properties["tags"].XListType; got == nil || *got != "set" {
		t.Errorf("tags: list type %v, want set", got)
	}
}

// A value the chart's values.yaml supplies is not required by the CRD, at
// any depth: Helm merges the defaults under the spec before it validates it
// (as Helm's own test chart chart-with-schema-and-subchart, whose schema
// requires the firstname its values.yaml gives). A default of null supplies
// nothing.
func TestGenerator_DefaultsAreNotRequired(t *testing.T) {
	schema := `{"type": "object", "required": ["firstname", "lastname", "nickname", "db"], "properties": {
  "firstname": {"type": "string"}, "lastname": {"type": "string"}, "nickname": {"type": "string"},
  "db": {"type": "object", "required": ["host", "port"], "properties": {"host": {"type": "string"}, "port": {"type": "integer"}}}}}`
	values := "firstname: John\nnickname: null\ndb:\n  port: 5432\n"
	crd, err := (&Generator{}).CRD(loadWithValues(t, "things.example.com", "", schema, values))
	if err != nil {
		t.Fatal(err)
	}
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	if got := strings.Join(spec.Required, ","); got != "lastname,nickname" {
		t.Errorf("spec requires %q, want lastname,nickname", got)
	}
	if got := strings.Join(spec.Properties["db"].Required, ","); got != "host" {
		t.Errorf("spec.db requires %q, want host", got)
	}
}

func TestGenerator_NoSchema(t *testing.T) {
	var warnings []string
	g := &Generator{Warn: func(m string) { warnings = append(warnings, m) }}
	crd, err := g.CRD(load(t, "things.example.com", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	s := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	spec := s.Properties["spec"]
	if spec.Type != "object" || spec.XPreserveUnknownFields == nil || !*spec.XPreserveUnknownFields || len(s.Required) > 0 {
		t.Errorf("spec %+v, want an optional object keeping unknown fields", spec)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "chart thing has no values.schema.json") {
		t.Errorf("warnings %q, want one naming the chart", warnings)
	}
}

func TestGenerator_Errors(t *testing.T) {
	tests := []struct {
		name      string
		group     string
		chartYAML string
		hooks     []string
		want      []string
	}{
		{name: "bad columns", chartYAML: "annotations:\n  rudder.dev/printer-columns: 'name: x'\n", want: []string{"chart thing", "rudder.dev/printer-columns", "for example"}},
		{name: "column without path", chartYAML: "annotations:\n  rudder.dev/printer-columns: '[{name: X, type: string}]'\n", want: []string{"rudder.dev/printer-columns", "column 1 needs a name and a jsonPath"}},
		{name: "column type", chartYAML: "annotations:\n  rudder.dev/printer-columns: '[{name: X, type: text, jsonPath: .spec.x}]'\n", want: []string{"column X", `"text"`}},
		{name: "unknown column field", chartYAML: "annotations:\n  rudder.dev/printer-columns: '[{name: X, type: string, path: .spec.x}]'\n", want: []string{"rudder.dev/printer-columns", "unknown field"}},
		{name: "scale path", chartYAML: "annotations:\n  rudder.dev/scale: '{specReplicasPath: replicas, statusReplicasPath: .status.replicas}'\n", want: []string{"rudder.dev/scale", "under .spec"}},
		{name: "short name", chartYAML: "annotations:\n  rudder.dev/short-names: Th\n", want: []string{"rudder.dev/short-names", `"Th"`}},
		{name: "plural equals singular", chartYAML: "annotations:\n  rudder.dev/plural: thing\n", want: []string{"rudder.dev/plural", "also the singular"}},
		{name: "crd annotations not a map", chartYAML: "annotations:\n  rudder.dev/crd-annotations: '[a]'\n", want: []string{"rudder.dev/crd-annotations"}},
		{name: "protected group", group: "things.k8s.io", want: []string{"rudder.dev/crd-annotations", "api-approved.kubernetes.io", "things.k8s.io"}},
		{name: "status schema", chartYAML: "annotations:\n  rudder.dev/status-schema: 'x: {type: array}'\n", want: []string{"rudder.dev/status-schema", ".status.x: items: missing"}},
		{name: "status key of rudder", chartYAML: "annotations:\n  rudder.dev/status-schema: 'phase: {type: string}'\n", want: []string{".status.phase", "rudder's release reconciler", "rudder.dev/status-schema"}},
		{name: "status key of a hook", hooks: []string{"clash"}, want: []string{".status.phase", `hook "clash"`}},
		{name: "status key of two hooks", hooks: []string{"backup", "extra"}, want: []string{".status.lastBackup", `hook "backup"`, `hook "extra"`}},
		{name: "unknown hook", hooks: []string{"nope"}, want: []string{`no hook named "nope"`}},
		{name: "rule without rule", chartYAML: "annotations:\n  rudder.dev/validations: '[{message: m}]'\n", want: []string{"rudder.dev/validations", "entry 1 has no rule"}},
		{name: "name schema type", chartYAML: "annotations:\n  rudder.dev/name-schema: '{type: integer}'\n", want: []string{"rudder.dev/name-schema", "type: string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			group := tt.group
			if group == "" {
				group = "things.example.com"
			}
			g := &Generator{Hooks: registry(t)}
			_, err := g.CRD(load(t, group, tt.chartYAML, testSchema, tt.hooks...))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestGenerator_Generate(t *testing.T) {
	w := load(t, "samples.k8s.io", "annotations:\n  rudder.dev/crd-annotations: |\n    api-approved.kubernetes.io: unapproved\n", testSchema)
	g := &Generator{}
	first, err := g.Generate([]watches.Watch{w})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		again, err := g.Generate([]watches.Watch{w})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first[0].Data, again[0].Data) {
			t.Fatalf("two runs differ:\n%s\n---\n%s", first[0].Data, again[0].Data)
		}
	}
	f := first[0]
	if f.Name != "samples.k8s.io_things.yaml" {
		t.Errorf("file name %q", f.Name)
	}
	for _, want := range []string{"# Generated by `make manifests`", "charts/thing", "Do not edit by hand", "api-approved.kubernetes.io: unapproved"} {
		if !bytes.Contains(f.Data, []byte(want)) {
			t.Errorf("file does not contain %q:\n%s", want, f.Data)
		}
	}

	dir := t.TempDir()
	if len(first) != 2 || first[1].Name != "rudder.dev_chartrollouts.yaml" {
		t.Errorf("files %d, want the kind's and rudder's own ChartRollout's", len(first))
	}
	if problems, _ := Check(dir, first); len(problems) != 2 || !strings.HasPrefix(problems[0], "missing: ") {
		t.Errorf("check of an empty dir: %q", problems)
	}
	old := File{Name: "old_things.yaml", Data: []byte(generatedMarker + " long ago\n")}
	if _, err := Write(dir, []File{old}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mine.yaml"), []byte("kind: X\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	kept, err := Write(dir, first)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(kept, ",") != "mine.yaml" {
		t.Errorf("kept %q, want the file not generated", kept)
	}
	if _, err := os.Stat(filepath.Join(dir, old.Name)); !os.IsNotExist(err) {
		t.Errorf("the stale generated file is still there (%v)", err)
	}
	if err := os.WriteFile(filepath.Join(dir, f.Name), []byte("edited"), 0o644); err != nil {
		t.Fatal(err)
	}
	problems, err := Check(dir, first)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 2 || !strings.HasPrefix(problems[0], "stale: ") || !strings.HasPrefix(problems[1], "extra: ") {
		t.Errorf("problems %q, want stale then extra", problems)
	}
}
