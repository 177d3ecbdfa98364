package watches

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"reflect"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/valuesfrom"
)

// fields is one entry of a watches file as written: operator-sdk's fields, then rudder's.
type fields struct {
	Group                   string
	Version                 string
	Kind                    string
	Chart                   string
	WatchDependentResources *bool
	OverrideValues          stringMap
	ReconcilePeriod         *string
	MaxConcurrentReconciles *int
	Selector                *metav1.LabelSelector
	Hooks                   []string
	MaxHistory              *int
	Remediation             *remediationFields
	OutOfBand               *string
	DriftDetection          *driftFields
	ValuesFrom              []valuesfrom.Source
	Test                    *testFields
	ClusterScoped           []groupKind
	Rollout                 *rolloutFields
}

// groupKind is a kind as a watches file names it: {group, kind}.
type groupKind struct {
	Group string
	Kind  string
}

// targets maps each field name, as spelled in a watches file, to where its value is decoded.
func (f *fields) targets() map[string]any {
	return map[string]any{
		"group":                   &f.Group,
		"version":                 &f.Version,
		"kind":                    &f.Kind,
		"chart":                   &f.Chart,
		"watchDependentResources": &f.WatchDependentResources,
		"overrideValues":          &f.OverrideValues,
		"reconcilePeriod":         &f.ReconcilePeriod,
		"maxConcurrentReconciles": &f.MaxConcurrentReconciles,
		"selector":                &f.Selector,
		"hooks":                   &f.Hooks,
		"maxHistory":              &f.MaxHistory,
		"remediation":             &f.Remediation,
		"outOfBand":               &f.OutOfBand,
		"driftDetection":          &f.DriftDetection,
		"valuesFrom":              &f.ValuesFrom,
		"test":                    &f.Test,
		"clusterScoped":           &f.ClusterScoped,
		"rollout":                 &f.Rollout,
	}
}

// entry checks one entry of a watches file and collects its problems.
type entry struct {
	file string
	n    int // position in the file, from 1
	gvk  schema.GroupVersionKind
	errs []error
}

func (e *entry) fail(field string, err error, format string, args ...any) {
	e.errs = append(e.errs, &EntryError{
		File: e.file, Entry: e.n, GVK: e.gvk, Field: field, Problem: fmt.Sprintf(format, args...), Err: err,
	})
}

// build decodes and checks the entry raw, filling in defaults. The Watch is meaningful only when e.errs is empty.
func (e *entry) build(raw json.RawMessage, resolve resolveChart) Watch {
	f, ok := e.decode(raw)
	if !ok {
		return Watch{GVK: e.gvk}
	}
	e.gvk = schema.GroupVersionKind{Group: f.Group, Version: f.Version, Kind: f.Kind}
	e.checkGVK()
	w := Watch{
		GVK:                     e.gvk,
		Chart:                   f.Chart,
		WatchDependentResources: f.WatchDependentResources == nil || *f.WatchDependentResources,
		OverrideValues:          e.overrideValues(f.OverrideValues),
		ReconcilePeriod:         e.reconcilePeriod(f.ReconcilePeriod),
		MaxConcurrentReconciles: e.atLeastOne("maxConcurrentReconciles", f.MaxConcurrentReconciles,
			DefaultMaxConcurrentReconciles, "at least one custom resource must be reconciled at a time"),
		Selector:      e.selector(f.Selector),
		Hooks:         e.hooks(f.Hooks),
		MaxHistory:    e.atLeastOne("maxHistory", f.MaxHistory, DefaultMaxHistory, "Helm must keep at least the current release"),
		Remediation:   e.remediation(f.Remediation),
		OutOfBand:     e.outOfBand(f.OutOfBand),
		Drift:         e.drift(f.DriftDetection),
		ValuesFrom:    e.valuesFrom(f.ValuesFrom),
		Test:          e.test(f.Test),
		ClusterScoped: e.clusterScoped(f.ClusterScoped),
		Rollout:       e.rollout(f.Rollout),
	}
	w.ChartFS, w.ChartDir = e.chart(f.Chart, resolve)
	return w
}

// clusterScoped checks the cluster-scoped kinds the chart may render.
func (e *entry) clusterScoped(kinds []groupKind) []schema.GroupKind {
	var out []schema.GroupKind
	for i, k := range kinds {
		if k.Kind == "" {
			e.fail(fmt.Sprintf("clusterScoped[%d].kind", i), nil,
				"is empty; name a cluster-scoped kind the chart renders, with its group (\"\" for the core group), e.g. {group: rbac.authorization.k8s.io, kind: ClusterRole}")
			continue
		}
		out = append(out, schema.GroupKind{Group: k.Group, Kind: k.Kind})
	}
	return out
}

// valuesFrom checks the kind's valuesFrom sources.
func (e *entry) valuesFrom(sources []valuesfrom.Source) []valuesfrom.Source {
	for i, s := range sources {
		for _, err := range s.Check(fmt.Sprintf("valuesFrom[%d]", i)) {
			field, problem, _ := strings.Cut(err.Error(), ": ")
			e.fail(field, nil, "%s", problem)
		}
	}
	return sources
}

// decode reads every field of raw strictly, reporting unknown fields and values of the wrong type.
func (e *entry) decode(raw json.RawMessage) (fields, bool) {
	var f fields
	// Learn the entry's identity leniently first, so that every message names it.
	_ = json.Unmarshal(raw, &e.gvk)
	var byName map[string]json.RawMessage
	if err := json.Unmarshal(raw, &byName); err != nil {
		e.fail("", err, "want a mapping with group, version, kind and chart")
		return f, false
	}
	targets := f.targets()
	ok := true
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		target, known := targets[name]
		if !known {
			e.fail(name, nil, "%s", unknownField(name, targets))
			ok = false
			continue
		}
		if err := unmarshalStrict(byName[name], target); err != nil {
			field, problem := decodeProblem(name, err)
			e.fail(field, err, "%s", problem)
			ok = false
		}
	}
	return f, ok
}

// stringMap is a mapping of strings that names the key of a value of another type when decoding fails.
type stringMap map[string]string

func (m *stringMap) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	if raw == nil {
		return nil
	}
	out := make(stringMap, len(raw))
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		var s string
		if err := json.Unmarshal(raw[k], &s); err != nil {
			var typeErr *json.UnmarshalTypeError
			if errors.As(err, &typeErr) {
				return &json.UnmarshalTypeError{Value: typeErr.Value, Type: typeErr.Type, Offset: typeErr.Offset, Field: k}
			}
			return err
		}
		out[k] = s
	}
	*m = out
	return nil
}

func unmarshalStrict(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

func unknownField(name string, targets map[string]any) string {
	known := slices.Sorted(maps.Keys(targets))
	for _, k := range known {
		if strings.EqualFold(k, name) {
			return fmt.Sprintf("unknown field; did you mean %q? Field names are case sensitive", k)
		}
	}
	return fmt.Sprintf("unknown field; remove it or use one of %s", strings.Join(known, ", "))
}

// decodeProblem says which field (possibly nested under name) a decoding error is about, and what is wrong.
func decodeProblem(name string, err error) (field, problem string) {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field = name
		if typeErr.Field != "" {
			field += "." + typeErr.Field
		}
		return field, fmt.Sprintf("got %s, want %s", valueName(typeErr.Value), typeName(typeErr.Type))
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if strings.HasPrefix(msg, "unknown field ") {
		msg += "; remove it or correct its spelling (names are case sensitive)"
	}
	return name, msg
}

// valueName names, in YAML terms, the kind of JSON value encoding/json reports in an UnmarshalTypeError.
func valueName(v string) string {
	switch {
	case v == "object":
		return "a mapping"
	case v == "array":
		return "a list"
	case v == "bool":
		return "a boolean"
	case strings.HasPrefix(v, "number "):
		return "the number " + strings.TrimPrefix(v, "number ")
	default:
		return "a " + v
	}
}

// typeName says, in YAML terms, what a field of type t takes.
func typeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return `a string (put numbers and booleans in quotes, such as "3")`
	case reflect.Int:
		return "a whole number"
	case reflect.Bool:
		return "true or false"
	case reflect.Map:
		return "a mapping"
	case reflect.Slice:
		return "a list"
	case reflect.Struct:
		return "a mapping"
	default:
		return t.String()
	}
}

// chart checks that the entry's chart exists and loads, and says where it is.
func (e *entry) chart(chartPath string, resolve resolveChart) (fs.FS, string) {
	if chartPath == "" {
		e.fail("chart", nil, "missing; set it to the chart's directory, relative to the watches file")
		return nil, ""
	}
	loc, err := resolve(chartPath)
	if err != nil {
		e.fail("chart", err, "%v", err)
		return nil, ""
	}
	if _, err := fs.Stat(loc.fsys, path.Join(loc.dir, chartYAML)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			e.fail("chart", err, "no chart at %q: %s does not exist; set chart to a chart directory, relative to "+
				"the watches file", chartPath, loc.chartYAML)
		} else {
			e.fail("chart", err, "cannot read %s: %v", loc.chartYAML, err)
		}
		return nil, ""
	}
	if _, err := helm.LoadChart(loc.fsys, loc.dir); err != nil {
		// The message names the directory already; the cause is what it lacks.
		cause := err
		if inner := errors.Unwrap(err); inner != nil {
			cause = inner
		}
		e.fail("chart", err, "the chart in %s does not load: %v; fix the chart (helm lint %s shows its problems)",
			loc.shown, cause, loc.shown)
		return nil, ""
	}
	return loc.fsys, loc.dir
}

// reconcilePeriod parses the reconcilePeriod field; absent means 0, no periodic resync.
func (e *entry) reconcilePeriod(s *string) time.Duration {
	if s == nil {
		return 0
	}
	d, err := time.ParseDuration(*s)
	switch {
	case err != nil:
		e.fail("reconcilePeriod", err, `%q is not a duration; use a Go duration such as "30s" or "5m"`, *s)
	case d < 0:
		e.fail("reconcilePeriod", nil, `%q is negative; use a positive duration such as "30s", or leave the field `+
			"out for no periodic resync", *s)
	}
	return d
}

// atLeastOne checks a count that must be at least 1; why says why.
func (e *entry) atLeastOne(field string, v *int, def int, why string) int {
	if v == nil {
		return def
	}
	if *v < 1 {
		e.fail(field, nil, "%d is less than 1, but %s; set 1 or more, or leave the field out for the default %d",
			*v, why, def)
	}
	return *v
}

// selector turns the selector field into a labels.Selector; absent selects everything.
func (e *entry) selector(s *metav1.LabelSelector) labels.Selector {
	if s == nil {
		return labels.Everything()
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		e.fail("selector", err, "%v; write a Kubernetes label selector: matchLabels and matchExpressions with "+
			"operators In, NotIn, Exists and DoesNotExist, keys and values as for labels", err)
		return labels.Nothing()
	}
	return sel
}

// hooks checks that hook names are non-empty and unique.
func (e *entry) hooks(names []string) []string {
	seen := make(map[string]int, len(names))
	for i, h := range names {
		field := fmt.Sprintf("hooks[%d]", i)
		if h == "" {
			e.fail(field, nil, "empty hook name; name a hook or remove the item")
			continue
		}
		if j, dup := seen[h]; dup {
			e.fail(field, nil, "%q is listed already as hooks[%d]; list each hook once", h, j)
			continue
		}
		seen[h] = i
	}
	return names
}
