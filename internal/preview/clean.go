package preview

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// noise are the metadata fields that change without anyone changing the
// object, which a diff leaves out (as does the status, the controllers').
var noise = []string{"managedFields", "resourceVersion", "uid", "generation", "creationTimestamp"}

// clean returns a copy of obj without status and metadata noise; nil for nil.
func clean(obj *unstructured.Unstructured) map[string]any {
	if obj == nil {
		return nil
	}
	m := runtime.DeepCopyJSON(obj.Object)
	delete(m, "status")
	for _, f := range noise {
		unstructured.RemoveNestedField(m, "metadata", f)
	}
	return m
}

// ownedFields returns the fields manager owns through its apply in obj's
// managed fields (FieldsV1, decoded), nil when it owns none.
func ownedFields(obj *unstructured.Unstructured, manager string) map[string]any {
	for _, e := range obj.GetManagedFields() {
		if e.Manager != manager || e.Operation != metav1.ManagedFieldsOperationApply || e.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if json.Unmarshal(e.FieldsV1.GetRawBytes(), &fields) == nil {
			return fields
		}
	}
	return nil
}

// keep returns the part of obj that fields (FieldsV1: "f:name" for a map
// key, "k:{...}" for the list item with those keys, "v:..." for a set value,
// "i:N" for an index; an empty set for a whole value) select, so that a
// diff leaves out what other managers own. Identity fields (apiVersion,
// kind, metadata.name and namespace) are always kept.
func keep(obj map[string]any, fields map[string]any) map[string]any {
	out, _ := keepValue(obj, fields).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	for _, k := range []string{"apiVersion", "kind"} {
		if v, ok := obj[k]; ok {
			out[k] = v
		}
	}
	for _, k := range []string{"name", "namespace"} {
		if v, ok, _ := unstructured.NestedFieldNoCopy(obj, "metadata", k); ok {
			_ = unstructured.SetNestedField(out, v, "metadata", k)
		}
	}
	return out
}

func keepValue(v any, fields map[string]any) any {
	if !hasChildren(fields) {
		return v // a leaf, or a whole value
	}
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, sub := range fields {
			name, ok := strings.CutPrefix(k, "f:")
			if !ok {
				continue
			}
			if val, ok := v[name]; ok {
				subFields, _ := sub.(map[string]any)
				out[name] = keepValue(val, subFields)
			}
		}
		return out
	case []any:
		var out []any
		for i, item := range v {
			if sub, ok := itemFields(fields, i, item); ok {
				out = append(out, keepValue(item, sub))
			}
		}
		return out
	}
	return v
}

// hasChildren reports whether fields select parts of a value, not all of it.
func hasChildren(fields map[string]any) bool {
	for k := range fields {
		if k != "." {
			return true
		}
	}
	return false
}

// itemFields returns the fields that select list item number i, when one does.
func itemFields(fields map[string]any, i int, item any) (map[string]any, bool) {
	for k, sub := range fields {
		subFields, _ := sub.(map[string]any)
		switch {
		case strings.HasPrefix(k, "k:"):
			var key map[string]any
			m, isMap := item.(map[string]any)
			if json.Unmarshal([]byte(k[2:]), &key) != nil || !isMap {
				continue
			}
			match := true
			for name, want := range key {
				match = match && sameJSON(m[name], want)
			}
			if match {
				return subFields, true
			}
		case strings.HasPrefix(k, "v:"):
			var want any
			if json.Unmarshal([]byte(k[2:]), &want) == nil && sameJSON(item, want) {
				return subFields, true
			}
		case strings.HasPrefix(k, "i:"):
			if n, err := strconv.Atoi(k[2:]); err == nil && n == i {
				return subFields, true
			}
		}
	}
	return nil, false
}

// sameJSON reports whether a and b encode to the same JSON (int64 and
// float64 numbers alike).
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// Masks of Secret data, as kubectl diff writes them: the same mask on both
// sides for a value that does not change, a different one for each side
// when it does. What a Secret holds is never shown.
const (
	mask       = "***"
	maskBefore = "*** (before)"
	maskAfter  = "*** (after)"
)

// maskSecret replaces the values of a Secret's data and stringData in live
// and merged (either nil) by masks; other objects are left as they are.
func maskSecret(live, merged map[string]any) {
	obj := live
	if obj == nil {
		obj = merged
	}
	if obj == nil || obj["apiVersion"] != "v1" || obj["kind"] != "Secret" {
		return
	}
	for _, field := range []string{"data", "stringData"} {
		before, _ := live[field].(map[string]any)
		after, _ := merged[field].(map[string]any)
		for k, v := range before {
			w, both := after[k]
			switch {
			case both && reflect.DeepEqual(v, w):
				before[k], after[k] = mask, mask
			case both:
				before[k], after[k] = maskBefore, maskAfter
			default:
				before[k] = mask
			}
		}
		for k := range after {
			if _, both := before[k]; !both {
				after[k] = mask
			}
		}
	}
}
