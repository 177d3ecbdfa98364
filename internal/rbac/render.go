package rbac

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/watches"
)

// Chart is what a kind's chart can make, over every set of values tried.
type Chart struct {
	// Objects holds one rendered object per kind and name, manifests and
	// hooks alike, in the order first rendered.
	Objects []*unstructured.Unstructured
	// Kinds are the kinds of Objects, sorted by group and kind.
	Kinds []schema.GroupVersionKind
	// Tests is true when the chart has tests (helm.sh/hook: test).
	Tests bool
	// Lookups are the kinds the chart's templates read with lookup.
	Lookups []schema.GroupVersionKind
	// Untried are the schema's boolean toggles no set of values rendered
	// with the toggle true: what they make may be missing from Kinds.
	Untried []string
}

// sampleName names the custom resource of a values set that has none: a
// short DNS-1035 label every chart accepts.
const sampleName = "example"

// valueSet is one set of values to render the chart with.
type valueSet struct {
	name   string // where the values come from, for errors
	crName string
	vals   map[string]any
}

// Render renders w's chart in namespace over each file of its ci/ directory
// (its default values when it has none) and sample (the kind's sample
// resource, nil for none), each of them also with every boolean toggle of the chart's schema
// set to true, all together and one at a time. These base sets must render;
// a toggled set that does not (a toggle needing other values) is skipped.
func Render(ctx context.Context, w watches.Watch, namespace string, sample *unstructured.Unstructured) (*Chart, error) {
	chrt, err := w.LoadChart()
	if err != nil {
		return nil, err
	}
	bases, err := baseSets(w, sample)
	if err != nil {
		return nil, err
	}
	toggles := booleanPaths(chrt.Schema())
	out := &Chart{Lookups: lookups(chrt)}
	seen := map[string]bool{}
	tried := map[string]bool{}
	add := func(r *helm.Rendered) {
		out.Tests = out.Tests || r.Tests
		for _, o := range append(r.Objects, r.Hooks...) {
			key := o.GetAPIVersion() + "/" + o.GetKind() + "/" + o.GetName()
			if !seen[key] {
				seen[key] = true
				out.Objects = append(out.Objects, o)
			}
		}
	}
	render := func(s valueSet) (*helm.Rendered, error) {
		c, err := w.LoadChart() // Helm changes a chart while rendering it
		if err != nil {
			return nil, err
		}
		return helm.Render(ctx, c, namespace, w.ReleaseName(s.crName), s.vals)
	}
	for _, base := range bases {
		r, err := render(base)
		if err != nil {
			return nil, fmt.Errorf("kind %s: values %s: %w", w.GVK.Kind, base.name, err)
		}
		add(r)
		for _, set := range toggled(base, toggles) {
			r, err := render(set.valueSet)
			if err != nil {
				continue
			}
			add(r)
			for _, t := range set.on {
				tried[t] = true
			}
		}
	}
	for _, t := range toggles {
		if !tried[strings.Join(t, ".")] {
			out.Untried = append(out.Untried, strings.Join(t, "."))
		}
	}
	out.Kinds = kindsOf(out.Objects)
	return out, nil
}

// baseSets returns the values of w's resources for the chart's defaults,
// each file of its ci/ directory and the sample, with w's overrideValues
// applied as rudder applies them.
func baseSets(w watches.Watch, sample *unstructured.Unstructured) ([]valueSet, error) {
	ci := path.Join(w.ChartDir, "ci")
	files, err := fs.Glob(w.ChartFS, path.Join(ci, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var specs []valueSet
	if len(files) == 0 { // ci/*.yaml, when there are some, stand for the defaults
		specs = append(specs, valueSet{name: "(chart defaults)", crName: sampleName, vals: map[string]any{}})
	}
	for _, f := range files {
		data, err := fs.ReadFile(w.ChartFS, f)
		if err != nil {
			return nil, err
		}
		vals := map[string]any{}
		if err := yaml.Unmarshal(data, &vals); err != nil {
			return nil, fmt.Errorf("kind %s: values file %s: %w", w.GVK.Kind, f, err)
		}
		specs = append(specs, valueSet{name: "ci/" + path.Base(f), crName: sampleName, vals: vals})
	}
	if sample != nil {
		spec, _, _ := unstructured.NestedMap(sample.Object, "spec")
		specs = append(specs, valueSet{name: "sample " + sample.GetName(), crName: sample.GetName(), vals: spec})
	}
	for i, s := range specs {
		obj := &unstructured.Unstructured{Object: map[string]any{"spec": s.vals}}
		own, err := w.Values().Own(obj)
		vals := own.Values
		if err != nil {
			return nil, fmt.Errorf("kind %s: %w", w.GVK.Kind, err)
		}
		specs[i].vals = vals
	}
	return specs, nil
}

// toggledSet is a value set with some toggles set to true.
type toggledSet struct {
	valueSet
	on []string // the toggles, as dotted paths
}

// toggled returns base with every toggle true, then with each toggle true
// alone.
func toggled(base valueSet, toggles [][]string) []toggledSet {
	if len(toggles) == 0 {
		return nil
	}
	all := toggledSet{valueSet: base}
	all.vals = runtime.DeepCopyJSON(base.vals)
	var sets []toggledSet
	for _, t := range toggles {
		setPath(all.vals, t, true)
		all.on = append(all.on, strings.Join(t, "."))
		one := toggledSet{valueSet: base, on: []string{strings.Join(t, ".")}}
		one.vals = runtime.DeepCopyJSON(base.vals)
		setPath(one.vals, t, true)
		sets = append(sets, one)
	}
	return append([]toggledSet{all}, sets...)
}

// setPath sets vals at p to v, making the maps on the way.
func setPath(vals map[string]any, p []string, v any) {
	for _, k := range p[:len(p)-1] {
		next, ok := vals[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			vals[k] = next
		}
		vals = next
	}
	vals[p[len(p)-1]] = v
}

// booleanPaths returns the paths of the boolean properties of a JSON schema,
// through properties and the schema combinators, sorted; not inside arrays
// or maps, whose keys are not known.
func booleanPaths(schemaJSON []byte) [][]string {
	var root map[string]any
	if len(schemaJSON) == 0 || json.Unmarshal(schemaJSON, &root) != nil {
		return nil
	}
	found := map[string][]string{}
	var walk func(s map[string]any, p []string)
	walk = func(s map[string]any, p []string) {
		if s["type"] == "boolean" && len(p) > 0 {
			found[strings.Join(p, ".")] = append([]string(nil), p...)
		}
		if props, ok := s["properties"].(map[string]any); ok {
			for k, v := range props {
				if sub, ok := v.(map[string]any); ok {
					walk(sub, append(p[:len(p):len(p)], k))
				}
			}
		}
		for _, key := range []string{"allOf", "anyOf", "oneOf"} {
			list, _ := s[key].([]any)
			for _, v := range list {
				if sub, ok := v.(map[string]any); ok {
					walk(sub, p)
				}
			}
		}
		for _, key := range []string{"if", "then", "else"} {
			if sub, ok := s[key].(map[string]any); ok {
				walk(sub, p)
			}
		}
	}
	walk(root, nil)
	keys := make([]string, 0, len(found))
	for k := range found {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([][]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, found[k])
	}
	return out
}

// lookupCall matches a template's lookup with a literal apiVersion and kind.
var lookupCall = regexp.MustCompile(`lookup\s+"([^"]*)"\s+"([^"]+)"`)

// lookups returns the kinds the templates of c and its subcharts read with
// lookup, sorted. A lookup whose kind is not a literal is not seen.
func lookups(c *helm.Chart) []schema.GroupVersionKind {
	seen := map[schema.GroupVersionKind]bool{}
	var out []schema.GroupVersionKind
	for _, t := range c.Templates() {
		for _, m := range lookupCall.FindAllSubmatch(t, -1) {
			gvk := schema.FromAPIVersionAndKind(string(m[1]), string(m[2]))
			if !seen[gvk] {
				seen[gvk] = true
				out = append(out, gvk)
			}
		}
	}
	sortKinds(out)
	return out
}

// kindsOf returns the kinds of objs, sorted, each once.
func kindsOf(objs []*unstructured.Unstructured) []schema.GroupVersionKind {
	seen := map[schema.GroupVersionKind]bool{}
	var out []schema.GroupVersionKind
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if !seen[gvk] {
			seen[gvk] = true
			out = append(out, gvk)
		}
	}
	sortKinds(out)
	return out
}

func sortKinds(gvks []schema.GroupVersionKind) {
	sort.Slice(gvks, func(i, j int) bool {
		if gvks[i].Group != gvks[j].Group {
			return gvks[i].Group < gvks[j].Group
		}
		if gvks[i].Kind != gvks[j].Kind {
			return gvks[i].Kind < gvks[j].Kind
		}
		return gvks[i].Version < gvks[j].Version
	})
}
