package compact

import (
	"reflect"
	"sync"
	"unique"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// maxShared is the length up to which a string is shared. Label keys and
// values (at most 63 bytes), field names, "True", "TCP", a chart's name or an
// image are; names, UIDs and messages, which few objects share, are left
// as they are.
const maxShared = 64

// Transform returns the transform of a cache: managed fields stripped, then
// the object's short strings shared. A decoder allocates each string of each
// object anew; at 10,000 WebApps the same few hundred keys and values were
// held hundreds of thousands of times.
func Transform() toolscache.TransformFunc {
	strip := cache.TransformStripManagedFields()
	return func(in any) (any, error) {
		out, err := strip(in)
		if err != nil {
			return out, err
		}
		Share(out)
		return out, nil
	}
}

// Share replaces obj's short strings, in place, with the one copy of each
// that the process keeps (package unique, which drops a copy no object holds
// any more). obj is an unstructured object or a pointer to a typed one.
func Share(obj any) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		shareJSON(u.Object)
		return
	}
	v := reflect.ValueOf(obj)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		shareValue(v.Elem())
	}
}

func share(s string) string {
	if len(s) == 0 || len(s) > maxShared {
		return s
	}
	return unique.Make(s).Value()
}

// unshared are the fields whose values no two objects hold: a process-wide
// copy of each would cost more than it saves.
var unshared = map[string]bool{"uid": true, "resourceVersion": true, "UID": true, "ResourceVersion": true}

// shareJSON shares the keys and short string values of a decoded JSON object.
func shareJSON(m map[string]any) {
	for k, v := range m {
		if !unshared[k] {
			v = shareJSONValue(v)
		}
		// Assigning to an existing key stores the key given: the
		// decoder's copy is let go.
		m[share(k)] = v
	}
}

func shareJSONValue(v any) any {
	switch t := v.(type) {
	case string:
		return share(t)
	case map[string]any:
		shareJSON(t)
	case []any:
		for i := range t {
			t[i] = shareJSONValue(t[i])
		}
	}
	return v
}

// shareValue shares the strings of a typed object's exported fields, its
// string maps' keys and values, and what its pointers and slices lead to.
func shareValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(share(v.String()))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			shareValue(v.Elem())
		}
	case reflect.Struct:
		for _, i := range fieldsOf(v.Type()) {
			shareValue(v.Field(i))
		}
	case reflect.Slice:
		for i := range v.Len() {
			shareValue(v.Index(i))
		}
	case reflect.Map:
		if m, ok := v.Interface().(map[string]string); ok {
			for k, s := range m {
				m[share(k)] = share(s)
			}
		}
	}
}

// fields caches fieldsOf by struct type.
var fields sync.Map // reflect.Type → []int

// fieldsOf returns the indexes of the fields of struct type t that shareValue
// visits: exported, not unshared, and able to hold a string. A PodSpec has
// dozens of fields that hold none (numbers, booleans, quantities, times), and
// looking them up anew for every object cost three times the object's decode.
func fieldsOf(t reflect.Type) []int {
	if f, ok := fields.Load(t); ok {
		return f.([]int)
	}
	var idx []int
	for i := range t.NumField() {
		f := t.Field(i)
		if f.IsExported() && !unshared[f.Name] && holdsStrings(f.Type, map[reflect.Type]bool{}) {
			idx = append(idx, i)
		}
	}
	fields.Store(t, idx)
	return idx
}

// holdsStrings reports whether shareValue finds a string to share in a value
// of type t; seen guards against recursive types.
func holdsStrings(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.String:
		return true
	case reflect.Pointer:
		return holdsStrings(t.Elem(), seen)
	case reflect.Slice:
		// Bytes are data (a Secret's, a certificate), not strings.
		return t.Elem().Kind() != reflect.Uint8 && holdsStrings(t.Elem(), seen)
	case reflect.Map:
		return t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && !unshared[f.Name] && holdsStrings(f.Type, seen) {
				return true
			}
		}
	}
	return false
}
