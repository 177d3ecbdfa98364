package crdgen

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// The Chart.yaml annotations of rudder's chart convention; doc.go and docs/chart-conventions.md describe each.
const (
	AnnotationPlural         = "rudder.dev/plural"
	AnnotationSingular       = "rudder.dev/singular"
	AnnotationShortNames     = "rudder.dev/short-names"
	AnnotationCategories     = "rudder.dev/categories"
	AnnotationPrinterColumns = "rudder.dev/printer-columns"
	AnnotationScale          = "rudder.dev/scale"
	AnnotationCRDAnnotations = "rudder.dev/crd-annotations"
	AnnotationStatusSchema   = "rudder.dev/status-schema"
	AnnotationValidations    = "rudder.dev/validations"
	AnnotationNameSchema     = "rudder.dev/name-schema"
)

// known are the annotations above; another rudder.dev/ annotation is most likely a typo.
var known = []string{
	AnnotationPlural, AnnotationSingular, AnnotationShortNames, AnnotationCategories, AnnotationPrinterColumns,
	AnnotationScale, AnnotationCRDAnnotations, AnnotationStatusSchema, AnnotationValidations, AnnotationNameSchema,
}

// annotations reads a chart's annotations of rudder's convention.
type annotations struct {
	chart string
	all   map[string]string
	warn  func(string)
}

// get returns the annotation key, trimmed, and whether the chart has it.
func (a annotations) get(key string) (string, bool) {
	v, ok := a.all[key]
	return strings.TrimSpace(v), ok
}

// fail returns an error naming the chart and the annotation key.
func (a annotations) fail(key, format string, args ...any) error {
	return &AnnotationError{Chart: a.chart, Annotation: key, Problem: fmt.Sprintf(format, args...)}
}

// list reads a comma-separated annotation; absent gives def, empty gives none.
func (a annotations) list(key string, def []string) []string {
	v, ok := a.get(key)
	if !ok {
		return def
	}
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// decode reads the YAML (or JSON) annotation key strictly into v; example shows the expected form in messages.
func (a annotations) decode(key string, v any, example string) (bool, error) {
	text, ok := a.get(key)
	if !ok {
		return false, nil
	}
	if err := yaml.UnmarshalStrict([]byte(text), v); err != nil {
		return true, a.fail(key, "%v; write it as YAML, for example:\n%s", err, example)
	}
	return true, nil
}

// validations reads a YAML list of CEL rules, as x-kubernetes-validations takes them.
func (a annotations) validations(key, example string) (apiextensionsv1.ValidationRules, error) {
	var rules apiextensionsv1.ValidationRules
	if _, err := a.decode(key, &rules, example); err != nil {
		return nil, err
	}
	for i, r := range rules {
		if strings.TrimSpace(r.Rule) == "" {
			return nil, a.fail(key, "entry %d has no rule; give each entry a CEL expression in \"rule\"", i+1)
		}
	}
	return rules, nil
}

// statusSchema reads the chart's own status properties, converted as values.schema.json is.
func (a annotations) statusSchema() (map[string]apiextensionsv1.JSONSchemaProps, error) {
	var raw map[string]json.RawMessage
	if _, err := a.decode(AnnotationStatusSchema, &raw, "  lastSync:\n    type: string\n    format: date-time"); err != nil {
		return nil, err
	}
	if len(raw) == 0 {
		return nil, nil
	}
	c := &converter{chart: a.chart, root: node{}, warn: a.warn}
	out := make(map[string]apiextensionsv1.JSONSchemaProps, len(raw))
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		s, err := c.convert(".status."+name, raw[name])
		if err != nil {
			return nil, a.fail(AnnotationStatusSchema, "%s", strings.TrimPrefix(err.Error(), "chart "+a.chart+": "))
		}
		out[name] = s
	}
	return out, nil
}

// warnUnknown warns about rudder.dev/ annotations this convention does not have.
func (a annotations) warnUnknown() {
	for _, key := range slices.Sorted(maps.Keys(a.all)) {
		if strings.HasPrefix(key, "rudder.dev/") && !slices.Contains(known, key) && a.warn != nil {
			a.warn(fmt.Sprintf("chart %s: Chart.yaml annotation %s is not one rudder knows, ignored (known: %s)",
				a.chart, key, strings.Join(known, ", ")))
		}
	}
}
