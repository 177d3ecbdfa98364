package crdgen

import (
	"encoding/json"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// spec wraps the schema of one value "v" in a values.schema.json.
func spec(value string) string {
	return `{"type": "object", "properties": {"v": ` + value + `}}`
}

// asJSON encodes s for comparison.
func asJSON(t *testing.T, s apiextensionsv1.JSONSchemaProps) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestConvertDocument_Keywords(t *testing.T) {
	tests := []struct {
		name  string
		value string // the schema of .spec.v
		want  string // its CRD schema, as JSON
		warn  string // part of the one warning wanted; empty for none
	}{
		{name: "type", value: `{"type": "string"}`, want: `{"type":"string"}`},
		{name: "nullable type", value: `{"type": ["string", "null"]}`, want: `{"type":"string","nullable":true}`},
		{name: "int or string type", value: `{"type": ["integer", "string"]}`, want: `{"x-kubernetes-int-or-string":true}`},
		{name: "int or string oneOf", value: `{"oneOf": [{"type": "string"}, {"type": "integer"}]}`, want: `{"x-kubernetes-int-or-string":true}`},
		{name: "int or string anyOf", value: `{"anyOf": [{"type": "integer"}, {"type": "string"}]}`, want: `{"x-kubernetes-int-or-string":true}`},
		{name: "description and default", value: `{"type": "integer", "description": "d", "default": 3}`, want: `{"description":"d","type":"integer","default":3}`},
		{name: "null default", value: `{"type": "string", "nullable": true, "default": null}`, want: `{"type":"string","nullable":true}`, warn: "default: null is left out"},
		{name: "enum", value: `{"type": "string", "enum": ["a", "b"]}`, want: `{"type":"string","enum":["a","b"]}`},
		{name: "const", value: `{"type": "string", "const": "a"}`, want: `{"type":"string","enum":["a"]}`},
		{name: "bounds", value: `{"type": "number", "minimum": 1, "maximum": 9, "multipleOf": 0.5}`, want: `{"type":"number","maximum":9,"minimum":1,"multipleOf":0.5}`},
		{name: "exclusive draft-07", value: `{"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10}`, want: `{"type":"integer","maximum":10,"exclusiveMaximum":true,"minimum":0,"exclusiveMinimum":true}`},
		{name: "exclusive stricter than minimum", value: `{"type": "integer", "minimum": 0, "exclusiveMinimum": 5}`, want: `{"type":"integer","minimum":5,"exclusiveMinimum":true}`},
		{name: "minimum stricter than exclusive", value: `{"type": "integer", "minimum": 7, "exclusiveMinimum": 5}`, want: `{"type":"integer","minimum":7}`},
		{name: "exclusive openapi flag", value: `{"type": "integer", "minimum": 0, "exclusiveMinimum": true}`, want: `{"type":"integer","minimum":0,"exclusiveMinimum":true}`},
		{name: "string lengths and pattern", value: `{"type": "string", "minLength": 1, "maxLength": 5, "pattern": "^a"}`, want: `{"type":"string","maxLength":5,"minLength":1,"pattern":"^a"}`},
		{name: "known format", value: `{"type": "string", "format": "date-time"}`, want: `{"type":"string","format":"date-time"}`},
		{name: "unknown format", value: `{"type": "string", "format": "uri-reference"}`, want: `{"type":"string"}`, warn: `"uri-reference" is not a format Kubernetes knows`},
		{name: "list lengths", value: `{"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3}`, want: `{"type":"array","maxItems":3,"minItems":1,"items":{"type":"string"}}`},
		{name: "unique scalars", value: `{"type": "array", "items": {"type": "string"}, "uniqueItems": true}`, want: `{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"set"}`},
		{name: "unique objects", value: `{"type": "array", "items": {"type": "object"}, "uniqueItems": true}`, want: `{"type":"array","items":{"type":"object"}}`, warn: "uniqueness only of lists of scalars"},
		{name: "object sizes", value: `{"type": "object", "minProperties": 1, "maxProperties": 2}`, want: `{"type":"object","maxProperties":2,"minProperties":1}`},
		{name: "map", value: `{"type": "object", "additionalProperties": {"type": "string"}}`, want: `{"type":"object","additionalProperties":{"type":"string"}}`},
		{name: "any extra fields", value: `{"type": "object", "additionalProperties": true}`, want: `{"type":"object","x-kubernetes-preserve-unknown-fields":true}`},
		{name: "no extra fields", value: `{"type": "object", "additionalProperties": false}`, want: `{"type":"object"}`},
		{name: "required", value: `{"type": "object", "required": ["b", "a"], "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}`, want: `{"type":"object","required":["b","a"],"properties":{"a":{"type":"string"},"b":{"type":"string"}}}`},
		{name: "type inferred", value: `{"properties": {"a": {"type": "string"}}}`, want: `{"type":"object","properties":{"a":{"type":"string"}}}`},
		{name: "anything", value: `{}`, want: `{"x-kubernetes-preserve-unknown-fields":true}`},
		{name: "not", value: `{"type": "string", "not": {"enum": ["x"]}}`, want: `{"type":"string","not":{"enum":["x"]}}`},
		{name: "nullable keyword", value: `{"type": "string", "nullable": true}`, want: `{"type":"string","nullable":true}`},
		{
			name:  "kubernetes extensions",
			value: `{"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}, "x-kubernetes-map-type": "atomic"}, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]}`,
			want:  `{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}},"x-kubernetes-map-type":"atomic"},"x-kubernetes-list-map-keys":["k"],"x-kubernetes-list-type":"map"}`,
		},
		{name: "embedded resource", value: `{"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}`, want: `{"type":"object","x-kubernetes-preserve-unknown-fields":true,"x-kubernetes-embedded-resource":true}`},
		{
			name:  "cel rules",
			value: `{"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "fixed", "reason": "FieldValueForbidden"}]}`,
			want:  `{"type":"string","x-kubernetes-validations":[{"rule":"self == oldSelf","message":"fixed","reason":"FieldValueForbidden"}]}`,
		},
		{name: "helm-only", value: `{"type": "string", "pattern": "^a", "default": "a", "x-rudder-helm-only": ["pattern", "default"]}`, want: `{"type":"string"}`},
		{name: "annotations dropped", value: `{"type": "string", "title": "t", "$comment": "c", "examples": ["a"]}`, want: `{"type":"string"}`},
		{name: "if then", value: `{"type": "object", "if": {}}`, want: `{"type":"object"}`, warn: "if: a CustomResourceDefinition cannot express it"},
		{name: "unknown keyword", value: `{"type": "string", "minlength": 3}`, want: `{"type":"string"}`, warn: "minlength: unknown keyword"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var warnings []string
			got, err := convertDocument("c", []byte(spec(tt.value)), func(m string) { warnings = append(warnings, m) })
			if err != nil {
				t.Fatal(err)
			}
			if s := asJSON(t, got.Properties["v"]); s != tt.want {
				t.Errorf("got  %s\nwant %s", s, tt.want)
			}
			switch {
			case tt.warn == "" && len(warnings) > 0:
				t.Errorf("warnings %q, want none", warnings)
			case tt.warn != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], tt.warn)):
				t.Errorf("warnings %q, want one containing %q", warnings, tt.warn)
			case tt.warn != "" && !strings.Contains(warnings[0], "chart c: schema of .spec.v"):
				t.Errorf("warning %q does not name the chart and the value", warnings[0])
			}
		})
	}
}

func TestConvertDocument_Refs(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string // the schema of .spec.v
	}{
		{
			name: "definitions",
			doc:  `{"type": "object", "definitions": {"port": {"type": "integer", "minimum": 1}}, "properties": {"v": {"$ref": "#/definitions/port"}}}`,
			want: `{"type":"integer","minimum":1}`,
		},
		{
			name: "defs with sibling description",
			doc:  `{"type": "object", "$defs": {"port": {"type": "integer", "description": "a port"}}, "properties": {"v": {"$ref": "#/$defs/port", "description": "the port"}}}`,
			want: `{"description":"the port","type":"integer"}`,
		},
		{
			name: "ref to ref",
			doc:  `{"type": "object", "definitions": {"a": {"$ref": "#/definitions/b"}, "b": {"type": "string"}}, "properties": {"v": {"$ref": "#/definitions/a"}}}`,
			want: `{"type":"string"}`,
		},
		{
			name: "same ref twice in a row",
			doc:  `{"type": "object", "definitions": {"s": {"type": "string"}, "o": {"type": "object", "properties": {"x": {"$ref": "#/definitions/s"}, "y": {"$ref": "#/definitions/s"}}}}, "properties": {"v": {"$ref": "#/definitions/o"}}}`,
			want: `{"type":"object","properties":{"x":{"type":"string"},"y":{"type":"string"}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := convertDocument("c", []byte(tt.doc), nil)
			if err != nil {
				t.Fatal(err)
			}
			if s := asJSON(t, got.Properties["v"]); s != tt.want {
				t.Errorf("got  %s\nwant %s", s, tt.want)
			}
		})
	}
}

func TestConvertDocument_Errors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string // parts of the error
	}{
		{
			name: "ref cycle through properties",
			doc:  `{"type": "object", "definitions": {"node": {"type": "object", "properties": {"child": {"$ref": "#/definitions/node"}}}}, "properties": {"v": {"$ref": "#/definitions/node"}}}`,
			want: []string{"chart c", ".spec.v.child", "$ref", "leads back to itself", "#/definitions/node → #/definitions/node"},
		},
		{
			name: "ref cycle between definitions",
			doc:  `{"type": "object", "definitions": {"a": {"$ref": "#/definitions/b"}, "b": {"$ref": "#/definitions/a"}}, "properties": {"v": {"$ref": "#/definitions/a"}}}`,
			want: []string{"chart c", ".spec.v", "leads back to itself"},
		},
		{name: "remote ref", doc: spec(`{"$ref": "other.json#/x"}`), want: []string{".spec.v", "only local references"}},
		{name: "dangling ref", doc: spec(`{"$ref": "#/definitions/none"}`), want: []string{".spec.v", "points to nothing"}},
		{name: "no type", doc: spec(`{"description": "d"}`), want: []string{"chart c: schema of .spec.v: type: missing", "x-kubernetes-preserve-unknown-fields"}},
		{name: "array without items", doc: spec(`{"type": "array"}`), want: []string{".spec.v: items: missing"}},
		{name: "several types", doc: spec(`{"type": ["string", "boolean"]}`), want: []string{".spec.v: type", "one type"}},
		{name: "properties and a map", doc: spec(`{"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}}`), want: []string{".spec.v: additionalProperties", "not both"}},
		{name: "tuple", doc: spec(`{"type": "array", "items": [{"type": "string"}]}`), want: []string{".spec.v: items", "tuple"}},
		{name: "oneOf of shapes", doc: spec(`{"oneOf": [{"type": "string"}, {"type": "object"}]}`), want: []string{".spec.v: type: missing"}},
		{name: "bad cel", doc: spec(`{"type": "string", "x-kubernetes-validations": [{"rul": "true"}]}`), want: []string{".spec.v: x-kubernetes-validations", "unknown field"}},
		{name: "helm-only names a missing keyword", doc: spec(`{"type": "string", "x-rudder-helm-only": ["pattern"]}`), want: []string{"x-rudder-helm-only", `"pattern"`}},
		{name: "not an object at the top", doc: `{"type": "string"}`, want: []string{".spec: type", "the values are an object"}},
		{name: "not JSON", doc: `[1]`, want: []string{"chart c", "not a JSON object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := convertDocument("c", []byte(tt.doc), nil)
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

func TestPlural(t *testing.T) {
	for kind, want := range map[string]string{
		"Database": "databases", "Policy": "policies", "Ingress": "ingresses", "Gateway": "gateways",
		"Box": "boxes", "Match": "matches", "Mesh": "meshes", "WebApp": "webapps",
	} {
		if got := Plural(kind); got != want {
			t.Errorf("Plural(%q) = %q, want %q", kind, got, want)
		}
	}
}
