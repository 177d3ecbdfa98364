package crdgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// FuzzConvertDocument feeds arbitrary values.schema.json documents to the conversion into the schema of
// .spec. It is deterministic, warnings included. An error is a *SchemaError naming the chart and, when it is
// about a value, its path under .spec. A converted schema is an object, has no $ref or definitions left, gives
// every value outside oneOf, anyOf, allOf and not a type (or int-or-string, or preserve-unknown-fields) and
// every list its items, and reads back from its JSON as the same schema, as the API server stores it.
func FuzzConvertDocument(f *testing.F) {
	charts, err := filepath.Glob("../../charts/*/values.schema.json")
	if err != nil || len(charts) == 0 {
		f.Fatalf("the charts' schemas: %v, %d found", err, len(charts))
	}
	for _, name := range charts {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, value := range []string{
		`{"type": ["string", "null"]}`,
		`{"type": ["integer", "string"]}`,
		`{"oneOf": [{"type": "string"}, {"type": "integer"}]}`,
		`{"type": "integer", "description": "d", "default": 3, "minimum": 0, "exclusiveMinimum": 5, "exclusiveMaximum": true}`,
		`{"type": "string", "enum": ["a", "b"], "const": "a", "format": "date-time", "pattern": "^a", "minLength": 1}`,
		`{"type": "array", "items": {"type": "string"}, "uniqueItems": true, "minItems": 1}`,
		`{"type": "array", "items": [{"type": "string"}]}`,
		`{"type": "object", "additionalProperties": {"type": "string"}, "minProperties": 1}`,
		`{"type": "object", "additionalProperties": true}`,
		`{"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}, "additionalProperties": false}`,
		`{"properties": {"a": {"type": "string"}}}`,
		`{}`,
		`true`,
		`{"type": "string", "not": {"enum": ["x"]}}`,
		`{"allOf": [{"type": "string"}, {"maxLength": 3}], "type": "string"}`,
		`{"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]}`,
		`{"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}`,
		`{"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "fixed"}]}`,
		`{"type": "string", "pattern": "^a", "default": "a", "x-rudder-helm-only": ["pattern", "default"]}`,
		`{"type": "object", "if": {}, "title": "t", "minlength": 3, "x-kubernetes-unknown": 1}`,
		`{"$ref": "#/definitions/port"}`,
		`{"$ref": "#/$defs/a", "description": "beside"}`,
		`{"$ref": "other.json#/x"}`,
		`{"type": "string", "default": null}`,
		`{"type": "array"}`,
		`{"type": ["string", "boolean"]}`,
	} {
		f.Add([]byte(`{"type": "object", "definitions": {"port": {"type": "integer", "minimum": 1}, "node": {"type": "object", ` +
			`"properties": {"child": {"$ref": "#/definitions/node"}}}}, "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"type": "string"}}, ` +
			`"properties": {"v": ` + value + `}}`))
	}
	for _, doc := range []string{`{"type": "string"}`, `[1]`, `{}`, `null`, `{"type": "object", "definitions": 3, "properties": {"v": {"$ref": "#/definitions/x"}}}`} {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var warnings, warningsAgain []string
		got, err := convertDocument("c", doc, func(m string) { warnings = append(warnings, m) })
		again, errAgain := convertDocument("c", doc, func(m string) { warningsAgain = append(warningsAgain, m) })
		if fmt.Sprint(err) != fmt.Sprint(errAgain) || !slices.Equal(warnings, warningsAgain) {
			t.Fatalf("not deterministic: %v, warnings %q; then %v, warnings %q", err, warnings, errAgain, warningsAgain)
		}
		for _, w := range warnings {
			if !strings.HasPrefix(w, "chart c: schema") {
				t.Errorf("warning %q does not name the chart", w)
			}
		}
		if err != nil {
			var se *SchemaError
			if !errors.As(err, &se) || se.Chart != "c" || se.Problem == "" || !strings.HasPrefix(err.Error(), "chart c: schema") {
				t.Fatalf("error %q (%T) is not a *SchemaError naming chart c and the problem", err, err)
			}
			if se.Path != "" && se.Path != ".spec" && !strings.HasPrefix(se.Path, ".spec.") && !strings.HasPrefix(se.Path, ".spec(") &&
				!strings.HasPrefix(se.Path, ".spec[") {
				t.Errorf("error %q: path %q is not under .spec", err, se.Path)
			}
			return
		}
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatalf("the converted schema does not encode: %v", err)
		}
		bAgain, _ := json.Marshal(again)
		if string(b) != string(bAgain) {
			t.Fatalf("not deterministic:\n%s\n%s", b, bAgain)
		}
		var read apiextensionsv1.JSONSchemaProps
		if err := json.Unmarshal(b, &read); err != nil {
			t.Fatalf("the converted schema does not decode from its JSON %s: %v", b, err)
		}
		if b2, _ := json.Marshal(read); string(b2) != string(b) {
			t.Fatalf("the converted schema changes in a JSON round trip:\n%s\n%s", b, b2)
		}
		if got.Type != "object" {
			t.Errorf(".spec has type %q, want object", got.Type)
		}
		checkConverted(t, ".spec", &got, false)
	})
}

// checkConverted checks that s, the converted schema at path, and those under it hold no $ref or definitions
// and are structural: each value outside a junction has a type and each list its items.
func checkConverted(t *testing.T, path string, s *apiextensionsv1.JSONSchemaProps, junction bool) {
	t.Helper()
	if s.Ref != nil || s.Definitions != nil || s.Schema != "" || s.ID != "" {
		t.Errorf("%s: $ref, definitions, $schema or $id left: %+v", path, s)
	}
	preserve := s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
	if !junction && s.Type == "" && !s.XIntOrString && !preserve {
		t.Errorf("%s: no type, int-or-string or preserve-unknown-fields", path)
	}
	if !junction && s.Type == "array" && (s.Items == nil || s.Items.Schema == nil) {
		t.Errorf("%s: a list without the schema of its items", path)
	}
	for name, p := range s.Properties {
		checkConverted(t, path+"."+name, &p, junction)
	}
	if s.Items != nil {
		if s.Items.Schema == nil || len(s.Items.JSONSchemas) > 0 {
			t.Errorf("%s: items are not one schema", path)
		} else {
			checkConverted(t, path+"[]", s.Items.Schema, junction)
		}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		checkConverted(t, path+".*", s.AdditionalProperties.Schema, junction)
	}
	for key, list := range map[string][]apiextensionsv1.JSONSchemaProps{"allOf": s.AllOf, "anyOf": s.AnyOf, "oneOf": s.OneOf} {
		for i := range list {
			checkConverted(t, fmt.Sprintf("%s(%s[%d])", path, key, i), &list[i], true)
		}
	}
	if s.Not != nil {
		checkConverted(t, path+"(not)", s.Not, true)
	}
}
