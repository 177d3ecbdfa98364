package crdgen

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// keyHelmOnly lists keywords of a schema that Helm checks and the CRD leaves out, such as a pattern a CEL rule
// already checks with a better message, or a default that values.yaml provides.
const keyHelmOnly = "x-rudder-helm-only"

// ignored are JSON Schema keywords that only annotate or organize a schema: the CRD leaves them out silently.
var ignored = map[string]bool{
	"$schema": true, "$id": true, "$comment": true, "title": true, "examples": true, "example": true,
	"readOnly": true, "writeOnly": true, "definitions": true, "$defs": true,
	"contentMediaType": true, "contentEncoding": true,
}

// unsupported are JSON Schema validations a CRD cannot express: left out with a warning, since Helm still
// checks them when it installs the release.
var unsupported = map[string]bool{
	"if": true, "then": true, "else": true, "dependencies": true, "dependentRequired": true,
	"dependentSchemas": true, "patternProperties": true, "propertyNames": true, "contains": true,
	"additionalItems": true, "unevaluatedProperties": true, "unevaluatedItems": true,
}

// keyword converts one keyword of the schema n of the value at path into out.
func (c *converter) keyword(path, key string, raw json.RawMessage, n node, out *apiextensionsv1.JSONSchemaProps) error {
	if fn, ok := scalars[key]; ok {
		if err := fn(raw, out); err != nil {
			return c.errorf(path, key, "%v", err)
		}
		return nil
	}
	switch key {
	case "type":
		return c.types(path, raw, out)
	case "properties":
		return c.properties(path, raw, out)
	case "items":
		return c.items(path, raw, out)
	case "additionalProperties":
		return c.additionalProperties(path, raw, n, out)
	case "oneOf", "anyOf", "allOf":
		return c.junction(path, key, raw, out)
	case "not":
		c.junctions++
		defer func() { c.junctions-- }()
		s, err := c.convert(path, raw)
		out.Not = &s
		return err
	case "default":
		c.defaultValue(path, raw, out)
		return nil
	case "format":
		return c.format(path, raw, out)
	case "exclusiveMinimum", "exclusiveMaximum":
		return c.exclusive(path, key, raw, out)
	case "uniqueItems":
		return nil // see finish: it depends on the items
	}
	switch {
	case ignored[key]:
	case unsupported[key]:
		c.warnf(path, key, "a CustomResourceDefinition cannot express it, so the API server does not check it "+
			"(Helm still does); list it in %s to silence this warning", keyHelmOnly)
	case strings.HasPrefix(key, "x-kubernetes-"):
		c.warnf(path, key, "unknown Kubernetes extension, left out; see docs/chart-conventions.md for those rudder passes on")
	default:
		c.warnf(path, key, "unknown keyword, left out of the CRD")
	}
	return nil
}

// types reads type: one name, or a list of one name and "null", or integer and string for an int-or-string.
func (c *converter) types(path string, raw json.RawMessage, out *apiextensionsv1.JSONSchemaProps) error {
	var names []string
	if err := json.Unmarshal(raw, &names); err != nil {
		var one string
		if err := json.Unmarshal(raw, &one); err != nil {
			return c.errorf(path, "type", "want a type name or a list of them, got %s", abbreviate(raw))
		}
		names = []string{one}
	}
	var kept []string
	for _, t := range names {
		if t == "null" {
			out.Nullable = true
			continue
		}
		kept = append(kept, t)
	}
	slices.Sort(kept)
	switch {
	case len(kept) == 1:
		out.Type = kept[0]
	case slices.Equal(kept, []string{"integer", "string"}):
		out.XIntOrString = true
	case len(kept) > 1:
		return c.errorf(path, "type", "%s: a CRD field has one type (or is an int-or-string, or null); "+
			"pick one, or use x-kubernetes-preserve-unknown-fields: true for a value of any type", abbreviate(raw))
	}
	return nil
}

func (c *converter) properties(path string, raw json.RawMessage, out *apiextensionsv1.JSONSchemaProps) error {
	var props map[string]json.RawMessage
	if err := json.Unmarshal(raw, &props); err != nil {
		return c.errorf(path, "properties", "want an object of schemas by property name")
	}
	out.Properties = make(map[string]apiextensionsv1.JSONSchemaProps, len(props))
	for _, name := range slices.Sorted(maps.Keys(props)) {
		s, err := c.convert(path+"."+name, props[name])
		if err != nil {
			return err
		}
		out.Properties[name] = s
	}
	return nil
}

func (c *converter) items(path string, raw json.RawMessage, out *apiextensionsv1.JSONSchemaProps) error {
	if strings.HasPrefix(strings.TrimSpace(string(raw)), "[") {
		return c.errorf(path, "items", "a list of schemas (a tuple) is not supported by CRDs; give one schema for every item")
	}
	s, err := c.convert(path+"[]", raw)
	out.Items = &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &s}
	return err
}

// additionalProperties: a schema makes a map; true keeps unknown fields; false is what pruning does anyway.
func (c *converter) additionalProperties(path string, raw json.RawMessage, n node, out *apiextensionsv1.JSONSchemaProps) error {
	var allow bool
	if err := json.Unmarshal(raw, &allow); err == nil {
		if allow {
			out.XPreserveUnknownFields = ptrTo(true)
		}
		return nil
	}
	if _, hasProps := n["properties"]; hasProps {
		return c.errorf(path, "additionalProperties", "a CRD object has either properties or additionalProperties "+
			"(a map), not both; declare every property, or use x-kubernetes-preserve-unknown-fields: true")
	}
	s, err := c.convert(path+".*", raw)
	out.AdditionalProperties = &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &s}
	return err
}

// junction converts oneOf, anyOf and allOf. Branches that only name the types integer and string make an
// int-or-string; other branches are kept as value validations, which must not declare types or descriptions.
func (c *converter) junction(path, key string, raw json.RawMessage, out *apiextensionsv1.JSONSchemaProps) error {
	var branches []json.RawMessage
	if err := json.Unmarshal(raw, &branches); err != nil {
		return c.errorf(path, key, "want a list of schemas")
	}
	if key != "allOf" && isIntOrString(branches) {
		out.XIntOrString = true
		return nil
	}
	c.junctions++
	defer func() { c.junctions-- }()
	list := make([]apiextensionsv1.JSONSchemaProps, len(branches))
	for i, b := range branches {
		s, err := c.convert(fmt.Sprintf("%s(%s[%d])", path, key, i), b)
		if err != nil {
			return err
		}
		list[i] = s
	}
	switch key {
	case "oneOf":
		out.OneOf = list
	case "anyOf":
		out.AnyOf = list
	default:
		out.AllOf = list
	}
	return nil
}

// isIntOrString says whether branches are exactly {type: integer} and {type: string}, in any order.
func isIntOrString(branches []json.RawMessage) bool {
	var types []string
	for _, b := range branches {
		var n struct {
			Type string `json:"type"`
		}
		var all map[string]json.RawMessage
		if json.Unmarshal(b, &n) != nil || json.Unmarshal(b, &all) != nil || len(all) != 1 {
			return false
		}
		types = append(types, n.Type)
	}
	slices.Sort(types)
	return slices.Equal(types, []string{"integer", "string"})
}

// finish applies what depends on several keywords once all are read.
func (c *converter) finish(path string, n node, out *apiextensionsv1.JSONSchemaProps) {
	if c.junctions == 0 && out.Type == "" && !out.XIntOrString {
		switch {
		case out.Properties != nil || out.AdditionalProperties != nil:
			out.Type = "object"
		case out.Items != nil:
			out.Type = "array"
		}
	}
	var unique bool
	if raw, ok := n["uniqueItems"]; !ok || json.Unmarshal(raw, &unique) != nil || !unique {
		return
	}
	if out.XListType != nil {
		return // the author chose
	}
	if out.Items != nil && out.Items.Schema != nil && scalarTypes[out.Items.Schema.Type] {
		out.XListType = ptrTo("set")
		return
	}
	c.warnf(path, "uniqueItems", "left out: a CRD checks uniqueness only of lists of scalars (x-kubernetes-list-type: set); "+
		"for a list of objects, consider x-kubernetes-list-type: map with x-kubernetes-list-map-keys")
}

// scalarTypes are the item types x-kubernetes-list-type: set allows.
var scalarTypes = map[string]bool{"string": true, "integer": true, "number": true, "boolean": true}

func ptrTo[T any](v T) *T { return &v }
