package crdgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// node is one JSON Schema object, each keyword still encoded.
type node map[string]json.RawMessage

// converter turns the JSON Schema of one chart (draft-07, as Helm reads values.schema.json) into the structural
// OpenAPI schema a CustomResourceDefinition takes.
type converter struct {
	chart string   // the chart's name, for messages
	root  node     // the whole document, where local $ref point
	refs  []string // the $refs being expanded around the value converted, to find cycles
	// junctions counts the oneOf, anyOf, allOf and not around the value converted: their branches only
	// validate, so they get no inferred type and need none.
	junctions int
	warn      func(string)
}

// convertDocument converts doc, a whole values.schema.json, into the schema of .spec.
func convertDocument(chart string, doc []byte, warn func(string)) (apiextensionsv1.JSONSchemaProps, error) {
	var root node
	if err := json.Unmarshal(doc, &root); err != nil {
		return apiextensionsv1.JSONSchemaProps{}, &SchemaError{Chart: chart, Problem: fmt.Sprintf(
			"values.schema.json is not a JSON object: %v", err)}
	}
	c := &converter{chart: chart, root: root, warn: warn}
	s, err := c.convert(".spec", doc)
	if err == nil && s.Type != "object" {
		err = c.errorf(".spec", "type", `the values are an object: set "type": "object" at the top of values.schema.json`)
	}
	return s, err
}

// convert converts raw, the schema of the value at path (".spec.image", for messages).
func (c *converter) convert(path string, raw json.RawMessage) (apiextensionsv1.JSONSchemaProps, error) {
	var out apiextensionsv1.JSONSchemaProps
	n, err := c.decode(path, raw)
	if err != nil {
		return out, err
	}
	depth := len(c.refs) // the $refs being expanded around this value, to find cycles
	defer func() { c.refs = c.refs[:depth] }()
	if n, err = c.resolve(path, n); err != nil {
		return out, err
	}
	helmOnly, err := c.helmOnly(path, n)
	if err != nil {
		return out, err
	}
	for _, key := range keywordOrder(n) {
		if helmOnly[key] {
			continue
		}
		if err := c.keyword(path, key, n[key], n, &out); err != nil {
			return out, err
		}
	}
	c.finish(path, n, &out)
	return out, c.checkStructural(path, &out)
}

// late are keywords read after the others, since they refine them.
var late = map[string]bool{"exclusiveMinimum": true, "exclusiveMaximum": true}

// keywordOrder returns the keywords of n in a fixed order: by name, those in late last.
func keywordOrder(n node) []string {
	keys := slices.Sorted(maps.Keys(n))
	slices.SortStableFunc(keys, func(a, b string) int {
		switch {
		case late[a] == late[b]:
			return 0
		case late[a]:
			return 1
		default:
			return -1
		}
	})
	return keys
}

// decode reads raw as a schema object; `true` is the schema accepting anything.
func (c *converter) decode(path string, raw json.RawMessage) (node, error) {
	if t := bytes.TrimSpace(raw); bytes.Equal(t, []byte("true")) || bytes.Equal(t, []byte("{}")) {
		return node{"x-kubernetes-preserve-unknown-fields": json.RawMessage("true")}, nil
	}
	var n node
	if err := json.Unmarshal(raw, &n); err != nil || n == nil {
		return nil, c.errorf(path, "", "want a JSON Schema object, got %s", abbreviate(raw))
	}
	return n, nil
}

// resolve replaces a $ref by the schema it points to; the keywords beside $ref (a description, a default) are
// kept over the target's.
func (c *converter) resolve(path string, n node) (node, error) {
	for {
		raw, ok := n["$ref"]
		if !ok {
			return n, nil
		}
		var ref string
		if err := json.Unmarshal(raw, &ref); err != nil {
			return nil, c.errorf(path, "$ref", "want a string, got %s", abbreviate(raw))
		}
		if slices.Contains(c.refs, ref) {
			return nil, c.errorf(path, "$ref", "%q leads back to itself (%s → %s): a CustomResourceDefinition "+
				"cannot describe a recursive value; write the repeated part out to a fixed depth",
				ref, strings.Join(c.refs, " → "), ref)
		}
		c.refs = append(c.refs, ref)
		target, err := c.lookup(path, ref)
		if err != nil {
			return nil, err
		}
		merged := maps.Clone(target)
		delete(n, "$ref")
		maps.Copy(merged, n)
		n = merged
	}
}

// lookup finds the local $ref target #/definitions/<name> or #/$defs/<name>.
func (c *converter) lookup(path, ref string) (node, error) {
	section, name, ok := strings.Cut(strings.TrimPrefix(ref, "#/"), "/")
	if !strings.HasPrefix(ref, "#/") || !ok || (section != "definitions" && section != "$defs") || strings.Contains(name, "/") {
		return nil, c.errorf(path, "$ref", "%q is not supported: only local references to #/definitions/<name> "+
			"or #/$defs/<name> are; move the schema there", ref)
	}
	name = strings.NewReplacer("~1", "/", "~0", "~").Replace(name)
	var defs map[string]json.RawMessage
	if raw, ok := c.root[section]; ok {
		if err := json.Unmarshal(raw, &defs); err != nil {
			return nil, c.errorf("", section, "want an object of schemas by name")
		}
	}
	raw, ok := defs[name]
	if !ok {
		return nil, c.errorf(path, "$ref", "%q points to nothing: there is no %q under %s", ref, name, section)
	}
	target, err := c.decode(path, raw)
	if err != nil {
		return nil, err
	}
	return maps.Clone(target), nil
}

// helmOnly reads x-rudder-helm-only: the keywords of n that Helm checks but the CRD must not.
func (c *converter) helmOnly(path string, n node) (map[string]bool, error) {
	raw, ok := n[keyHelmOnly]
	if !ok {
		return nil, nil
	}
	var keys []string
	if err := json.Unmarshal(raw, &keys); err != nil {
		return nil, c.errorf(path, keyHelmOnly, "want a list of keyword names such as [\"pattern\", \"default\"], got %s",
			abbreviate(raw))
	}
	out := map[string]bool{keyHelmOnly: true}
	for _, k := range keys {
		if _, present := n[k]; !present {
			return nil, c.errorf(path, keyHelmOnly, "names %q, which this schema does not have; remove it from the list", k)
		}
		out[k] = true
	}
	return out, nil
}

// errorf returns an error naming the chart, the value's path and the keyword.
func (c *converter) errorf(path, key, format string, args ...any) error {
	return &SchemaError{Chart: c.chart, Path: path, Keyword: key, Problem: fmt.Sprintf(format, args...)}
}

// warnf reports a keyword the CRD leaves out.
func (c *converter) warnf(path, key, format string, args ...any) {
	if c.warn != nil {
		c.warn((&SchemaError{Chart: c.chart, Path: path, Keyword: key, Problem: fmt.Sprintf(format, args...)}).Error())
	}
}

// compact returns raw without insignificant white space.
func compact(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return bytes.TrimSpace(raw)
	}
	return b.Bytes()
}

func bytesReader(raw json.RawMessage) *bytes.Reader { return bytes.NewReader(raw) }

// abbreviate shows raw JSON in a message, cut when long.
func abbreviate(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
