package hooktest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/rudder-operator/rudder/internal/hook"
)

// Read is what a hook's spec reader gave for values.
type Read[T any] struct {
	// Values are the release values read, decoded as the API machinery decodes a custom resource.
	Values map[string]any
	// Got is the reader's settings; meaningful only when Err is nil.
	Got T
	// Err is the reader's error.
	Err error
}

// ReadSpec decodes data, a JSON object, as the API machinery decodes a custom resource's spec (whole numbers as
// int64), runs read on it and checks what every spec reader must do: give the same answer twice; leave the
// values as they were; fail only with a *hook.FieldError whose field is one of fields, or a mapping on the way
// to one, and is set in the values or said to be missing; and answer alike when numbers are decoded as encoding/json decodes them
// (float64). ok is false when data is not a JSON object; the caller checks the settings.
func ReadSpec[T any](t *testing.T, data []byte, fields []string, read func(values map[string]any) (T, error)) (r Read[T], ok bool) {
	t.Helper()
	if utiljson.Unmarshal(data, &r.Values) != nil || r.Values == nil {
		return r, false
	}
	before := runtime.DeepCopyJSON(r.Values)
	r.Got, r.Err = read(r.Values)
	again, errAgain := read(r.Values)
	if !reflect.DeepEqual(r.Got, again) || fmt.Sprint(r.Err) != fmt.Sprint(errAgain) {
		t.Fatalf("the reader is not deterministic: %+v, %v; then %+v, %v", r.Got, r.Err, again, errAgain)
	}
	if !reflect.DeepEqual(r.Values, before) {
		t.Fatalf("the reader changed the values: %v, were %v", r.Values, before)
	}
	field := checkError(t, r.Values, fields, r.Err)

	var floats map[string]any
	if err := json.Unmarshal(data, &floats); err != nil {
		t.Fatalf("encoding/json does not decode what the API machinery decodes: %v", err)
	}
	got, err := read(floats)
	switch {
	case (err == nil) != (r.Err == nil) || field != checkError(t, floats, fields, err):
		t.Fatalf("numbers as float64 give %v, as int64 %v", err, r.Err)
	case err == nil && !reflect.DeepEqual(got, r.Got):
		t.Fatalf("numbers as float64 give %+v, as int64 %+v", got, r.Got)
	}
	return r, true
}

// checkError checks err, the reader's error for values, and returns the field it names.
func checkError(t *testing.T, values map[string]any, fields []string, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var fe *hook.FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("error %q (%T) is not a *hook.FieldError", err, err)
	}
	if !strings.Contains(err.Error(), "spec."+fe.Field+": ") || fe.Problem == "" {
		t.Errorf("error %q does not name spec.%s and say what is wrong", err, fe.Field)
	}
	known := false
	for _, f := range fields {
		known = known || f == fe.Field || strings.HasPrefix(f, fe.Field+".")
	}
	if !known {
		t.Errorf("error %q names %q, which is neither one of %q nor a mapping on the way to one", err, fe.Field, fields)
	}
	if v, set := At(values, fe.Field); !set && !strings.HasPrefix(fe.Problem, "missing") {
		t.Errorf("error %q names %q, which is not set (it is %v), and does not say it is missing", err, fe.Field, v)
	}
	return fe.Field
}

// At returns the value at field, a dotted path, in values; set is false when it, or a mapping on the way, is
// absent or null.
func At(values map[string]any, field string) (v any, set bool) {
	v = values
	for _, key := range strings.Split(field, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[key]; !ok {
			return nil, false
		}
	}
	return v, v != nil
}

// StringOr returns the string at field in values when it is set and not empty, and def otherwise: what a spec
// reader that read values without error gives for an optional string field.
func StringOr(values map[string]any, field, def string) string {
	if v, _ := At(values, field); v != nil && v != "" {
		s, _ := v.(string)
		return s
	}
	return def
}
