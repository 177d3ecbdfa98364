package hook

import (
	"fmt"
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// FieldError is a value a hook reads from the release values (the custom resource's spec with the watch's
// overrides) that it cannot use: a value of the wrong type, or one out of range.
type FieldError struct {
	// Field is the value's path under spec, such as "backup.retention".
	Field string
	// Problem says what is wrong and how to fix it.
	Problem string
}

// Error names the field as the user writes it, "spec.backup.retention: ...".
func (e *FieldError) Error() string { return "spec." + e.Field + ": " + e.Problem }

// String returns the string at path in values; found is false when it is absent or null. A value of another
// type, or one on the way that is not a mapping, is a *FieldError naming it.
func String(values map[string]any, path ...string) (s string, found bool, err error) {
	v, found, err := lookup(values, path)
	if !found || err != nil {
		return "", false, err
	}
	s, ok := v.(string)
	if !ok {
		return "", false, wrongType(path, v, `a string (put it in quotes, such as "16")`)
	}
	return s, true, nil
}

// Bool returns the boolean at path in values; found is false when it is absent or null. A value of another
// type, or one on the way that is not a mapping, is a *FieldError naming it.
func Bool(values map[string]any, path ...string) (b, found bool, err error) {
	v, found, err := lookup(values, path)
	if !found || err != nil {
		return false, false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, false, wrongType(path, v, "true or false")
	}
	return b, true, nil
}

// Int returns the whole number at path in values, as the API machinery (int64) or encoding/json (float64)
// decodes it; found is false when it is absent or null. A value of another type, a fraction, or one on the
// way that is not a mapping, is a *FieldError naming it.
func Int(values map[string]any, path ...string) (n int64, found bool, err error) {
	v, found, err := lookup(values, path)
	if !found || err != nil {
		return 0, false, err
	}
	switch n := v.(type) {
	case int64:
		return n, true, nil
	case int:
		return int64(n), true, nil
	case int32:
		return int64(n), true, nil
	case float64:
		if n == math.Trunc(n) && n >= math.MinInt64 && n < math.MaxInt64 {
			return int64(n), true, nil
		}
	}
	return 0, false, wrongType(path, v, "a whole number")
}

// Quantity returns the positive Kubernetes quantity, such as "10Gi", written as a string at path in values;
// found is false when it is absent, null or empty. A value of another type, a string that is not a positive
// quantity, or a value on the way that is not a mapping, is a *FieldError naming it.
func Quantity(values map[string]any, path ...string) (q resource.Quantity, found bool, err error) {
	s, found, err := String(values, path...)
	if !found || s == "" || err != nil {
		return resource.Quantity{}, false, err
	}
	q, err = resource.ParseQuantity(s)
	switch {
	case err != nil:
		return resource.Quantity{}, false, &FieldError{Field: strings.Join(path, "."), Problem: fmt.Sprintf(
			`%s is not a quantity (%v); write a Kubernetes quantity such as "10Gi"`, describe(s), err)}
	case q.Sign() <= 0:
		return resource.Quantity{}, false, &FieldError{Field: strings.Join(path, "."), Problem: fmt.Sprintf(
			`%s is not positive; write a size such as "10Gi"`, describe(s))}
	}
	return q, true, nil
}

// lookup returns the value at path in values; found is false when it, or a mapping on the way, is absent or
// null.
func lookup(values map[string]any, path []string) (v any, found bool, err error) {
	var cur any = values
	for i, key := range path {
		if cur == nil {
			return nil, false, nil
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false, wrongType(path[:i], cur, "a mapping")
		}
		if cur, ok = m[key]; !ok {
			return nil, false, nil
		}
	}
	return cur, cur != nil, nil
}

func wrongType(path []string, v any, want string) *FieldError {
	return &FieldError{Field: strings.Join(path, "."), Problem: fmt.Sprintf("got %s, want %s", describe(v), want)}
}

// describe names the JSON value v in a message, cut when long.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		if len(v) > 40 {
			v = v[:37] + "..."
		}
		return fmt.Sprintf("the string %q", v)
	case bool:
		return fmt.Sprintf("%t", v)
	case int64, int, int32, float64:
		return fmt.Sprintf("the number %v", v)
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	default:
		return fmt.Sprintf("a %T", v)
	}
}
