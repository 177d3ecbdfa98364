package ssa

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/rudder-operator/rudder/internal/watches"
)

// FieldManager is the field manager of rudder's server-side applies (drift
// repair). Helm's own writes are server-side applies with conflicts forced
// under another manager, the name of the binary that runs Helm: an upgrade
// then takes the fields it sets from rudder without a conflict, and rudder's
// next comparison is against the new revision.
const FieldManager = "rudder"

// Config returns what rudder applies of obj, a rendered object: a copy
// without its status and without the fields at the ignore paths, which are
// then neither compared nor put back, and stay with the manager that set
// them. A list index in a path names an element of obj's list.
func Config(obj *unstructured.Unstructured, ignore []watches.Pointer) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: make(map[string]any, len(obj.Object))}
	for k, v := range obj.Object {
		if k != "status" {
			out.Object[k] = runtime.DeepCopyJSONValue(v)
		}
	}
	for _, p := range ignore {
		prune(out.Object, p)
	}
	return out
}

// prune removes the value at pointer p from obj, when obj has it.
func prune(obj map[string]any, p watches.Pointer) {
	if len(p) == 0 {
		return
	}
	var parent any = obj
	var grand any
	for _, t := range p[:len(p)-1] {
		grand = parent
		next, ok := child(parent, t)
		if !ok {
			return
		}
		parent = next
	}
	last := p[len(p)-1]
	switch c := parent.(type) {
	case map[string]any:
		delete(c, last)
	case []any:
		i, ok := index(last)
		if !ok || i >= len(c) {
			return
		}
		shorter := slices.Delete(slices.Clone(c), i, i+1)
		// Set the shorter list where the list was.
		switch g := grand.(type) {
		case map[string]any:
			g[p[len(p)-2]] = shorter
		case []any:
			if j, ok := index(p[len(p)-2]); ok {
				g[j] = shorter
			}
		}
	}
}

func child(v any, token string) (any, bool) {
	switch c := v.(type) {
	case map[string]any:
		out, ok := c[token]
		return out, ok
	case []any:
		i, ok := index(token)
		if !ok || i >= len(c) {
			return nil, false
		}
		return c[i], true
	}
	return nil, false
}

// index returns the list index a pointer token names, if it names one:
// digits without a leading zero.
func index(t string) (int, bool) {
	if t == "" || t != "0" && strings.HasPrefix(t, "0") {
		return 0, false
	}
	i, err := strconv.Atoi(t)
	return i, err == nil && i >= 0
}

// Apply applies config with c under FieldManager, taking the fields of
// config from any other manager, and returns the object as the API server
// returned it. With dryRun the API server persists nothing: it runs
// defaulting and admission (mutating policies included) and returns the
// object as the apply would leave it, with rudder's fields in its managed
// fields.
func Apply(ctx context.Context, c client.Client, config *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, error) {
	obj := config.DeepCopy()
	opts := []client.ApplyOption{client.FieldOwner(FieldManager), client.ForceOwnership}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), opts...); err != nil {
		return nil, err
	}
	return obj, nil
}

// Owned returns the fields FieldManager applied to obj, from its managed
// fields; nil when it applied none.
func Owned(obj metav1.Object) (*fieldpath.Set, error) {
	for _, e := range obj.GetManagedFields() {
		if e.Manager != FieldManager || e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(e.FieldsV1.GetRawReader()); err != nil {
			return nil, fmt.Errorf("decoding the managed fields of %s: %w", FieldManager, err)
		}
		return set, nil
	}
	return nil, nil
}

// Drift returns the fields of applied, an object as rudder's apply of its
// configuration leaves it (a dry run), that live lacks or holds another value
// of, as paths such as spec.template.spec.containers[name="web"].image. Only
// the fields rudder applies are compared: what other managers add to live, or
// admission adds to both, is not drift. Where a whole map or list element
// is missing from live, it is named rather than each of its fields.
func Drift(applied, live *unstructured.Unstructured) ([]string, error) {
	owned, err := Owned(applied)
	if err != nil || owned == nil {
		return nil, err
	}
	var out []string
	named := map[string]bool{}
	owned.Leaves().Iterate(func(p fieldpath.Path) {
		want, ok := at(applied.Object, p)
		if !ok {
			return // applied as null: nothing to compare
		}
		for n := 1; n <= len(p); n++ {
			got, found := at(live.Object, p[:n])
			if n < len(p) && found {
				continue
			}
			if n == len(p) && found && equal(want, got) {
				return
			}
			name := strings.TrimPrefix(p[:n].String(), ".")
			if !named[name] {
				named[name] = true
				out = append(out, name)
			}
			return
		}
	})
	return out, nil
}

// at returns the value at path p of obj.
func at(obj any, p fieldpath.Path) (any, bool) {
	cur := obj
	for _, pe := range p {
		var ok bool
		if cur, ok = step(cur, pe); !ok {
			return nil, false
		}
	}
	return cur, true
}

func step(cur any, pe fieldpath.PathElement) (any, bool) {
	switch {
	case pe.FieldName != nil:
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		v, ok := m[*pe.FieldName]
		return v, ok
	case pe.Index != nil:
		l, ok := cur.([]any)
		if !ok || *pe.Index >= len(l) {
			return nil, false
		}
		return l[*pe.Index], true
	}
	l, ok := cur.([]any)
	if !ok {
		return nil, false
	}
	for _, item := range l {
		if pe.Key != nil && keyed(item, *pe.Key) || pe.Value != nil && value.Equals(value.NewValueInterface(item), *pe.Value) {
			return item, true
		}
	}
	return nil, false
}

// keyed reports whether item, an element of an associative list, has the
// key fields of key.
func keyed(item any, key value.FieldList) bool {
	m, ok := item.(map[string]any)
	if !ok {
		return false
	}
	for _, f := range key {
		v, ok := m[f.Name]
		if !ok || !value.Equals(value.NewValueInterface(v), f.Value) {
			return false
		}
	}
	return true
}

// equal compares two values of objects the API server returned: numbers by
// value, whatever their Go type.
func equal(a, b any) bool {
	return value.Equals(value.NewValueInterface(a), value.NewValueInterface(b))
}
