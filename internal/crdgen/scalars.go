package crdgen

import (
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// scalars convert the keywords that copy one value into one field, unchanged.
var scalars = map[string]func(json.RawMessage, *apiextensionsv1.JSONSchemaProps) error{
	"description":   func(r json.RawMessage, o *apiextensionsv1.JSONSchemaProps) error { return into(r, &o.Description) },
	"nullable":      func(r json.RawMessage, o *apiextensionsv1.JSONSchemaProps) error { return into(r, &o.Nullable) },
	"pattern":       func(r json.RawMessage, o *apiextensionsv1.JSONSchemaProps) error { return into(r, &o.Pattern) },
	"required":      func(r json.RawMessage, o *apiextensionsv1.JSONSchemaProps) error { return into(r, &o.Required) },
	"minimum":       func(r json.RawMessage, o *apiextensionsv1.JSONSchemaProps) error { return into(r, &o.Minimum) },
	"maximum":       func(r json.RawMessage, o *apiextensionsv1.JSONSchemaProps) error { return into(r, &o.Maximum) },
	"multipleOf":    func(r json.RawMessage, o *apiextensionsv1.JSONSchemaProps) error { return into(r, &o.MultipleOf) },
	"minLength":     func(r json.RawMessage, o *apiextensionsv1.JSONSchemaProps) error { return into(r, &o.MinLength) },
	"maxLength":     func(r json.RawMessage, o *apiextensionsv1.JSONSchemaProps) error { return into(r, &o.MaxLength) },
	"minItems":      func(r json.RawMessage, o *apiextensionsv1.JSONSchemaProps) error { return into(r, &o.MinItems) },
	"maxItems":      func(r json.RawMessage, o *apiextensionsv1.JSONSchemaProps) error { return into(r, &o.MaxItems) },
	"minProperties": func(r json.RawMessage, o *apiextensionsv1.JSONSchemaProps) error { return into(r, &o.MinProperties) },
	"maxProperties": func(r json.RawMessage, o *apiextensionsv1.JSONSchemaProps) error { return into(r, &o.MaxProperties) },
	"const": func(r json.RawMessage, o *apiextensionsv1.JSONSchemaProps) error {
		o.Enum = []apiextensionsv1.JSON{{Raw: compact(r)}}
		return nil
	},
	"enum": func(r json.RawMessage, o *apiextensionsv1.JSONSchemaProps) error {
		var values []json.RawMessage
		if err := into(r, &values); err != nil {
			return err
		}
		for _, v := range values {
			o.Enum = append(o.Enum, apiextensionsv1.JSON{Raw: compact(v)})
		}
		return nil
	},
	"x-kubernetes-validations": func(r json.RawMessage, o *apiextensionsv1.JSONSchemaProps) error {
		return into(r, &o.XValidations)
	},
	"x-kubernetes-preserve-unknown-fields": func(r json.RawMessage, o *apiextensionsv1.JSONSchemaProps) error {
		return into(r, &o.XPreserveUnknownFields)
	},
	"x-kubernetes-int-or-string": func(r json.RawMessage, o *apiextensionsv1.JSONSchemaProps) error {
		return into(r, &o.XIntOrString)
	},
	"x-kubernetes-embedded-resource": func(r json.RawMessage, o *apiextensionsv1.JSONSchemaProps) error {
		return into(r, &o.XEmbeddedResource)
	},
	"x-kubernetes-list-type": func(r json.RawMessage, o *apiextensionsv1.JSONSchemaProps) error {
		return into(r, &o.XListType)
	},
	"x-kubernetes-list-map-keys": func(r json.RawMessage, o *apiextensionsv1.JSONSchemaProps) error {
		return into(r, &o.XListMapKeys)
	},
	"x-kubernetes-map-type": func(r json.RawMessage, o *apiextensionsv1.JSONSchemaProps) error {
		return into(r, &o.XMapType)
	},
}

// into decodes raw strictly into v, explaining a mismatch in the schema author's terms.
func into(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytesReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("cannot read %s: %w", abbreviate(raw), err)
	}
	return nil
}

// kubernetesFormats are the formats the API server validates (k8s.io/kube-openapi's registry); others are
// left out, since the API server would drop them anyway.
var kubernetesFormats = map[string]bool{
	"bsonobjectid": true, "uri": true, "email": true, "hostname": true, "ipv4": true, "ipv6": true, "cidr": true,
	"mac": true, "uuid": true, "uuid3": true, "uuid4": true, "uuid5": true, "isbn": true, "isbn10": true,
	"isbn13": true, "creditcard": true, "ssn": true, "hexcolor": true, "rgbcolor": true, "byte": true,
	"password": true, "date": true, "duration": true, "datetime": true, "date-time": true,
	"int32": true, "int64": true, "float": true, "double": true,
}

func (c *converter) format(path string, raw json.RawMessage, out *apiextensionsv1.JSONSchemaProps) error {
	var f string
	if err := into(raw, &f); err != nil {
		return c.errorf(path, "format", "%v", err)
	}
	if !kubernetesFormats[f] {
		c.warnf(path, "format", "%q is not a format Kubernetes knows, left out; the API server does not check it", f)
		return nil
	}
	out.Format = f
	return nil
}

// defaultValue reads default. A null default is left out: the API server reads "default": null as no default,
// so a CRD holding one would not read back as written.
func (c *converter) defaultValue(path string, raw json.RawMessage, out *apiextensionsv1.JSONSchemaProps) {
	v := compact(raw)
	if string(v) == "null" {
		c.warnf(path, "default", "null is left out: the API server reads a null default as no default; remove it, "+
			"or list it in %s", keyHelmOnly)
		return
	}
	out.Default = &apiextensionsv1.JSON{Raw: v}
}

// exclusive reads exclusiveMinimum or exclusiveMaximum: a number in draft-07, a flag beside minimum or maximum
// in draft-04 and OpenAPI.
func (c *converter) exclusive(path, key string, raw json.RawMessage, out *apiextensionsv1.JSONSchemaProps) error {
	bound, flag := &out.Minimum, &out.ExclusiveMinimum
	if key == "exclusiveMaximum" {
		bound, flag = &out.Maximum, &out.ExclusiveMaximum
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		*flag = b
		return nil
	}
	var v float64
	if err := into(raw, &v); err != nil {
		return c.errorf(path, key, "want a number, got %s", abbreviate(raw))
	}
	// A minimum beside it is read in key order, before: keep the stricter of the two bounds.
	low := key == "exclusiveMinimum"
	if *bound == nil || (low && v >= **bound) || (!low && v <= **bound) {
		*bound, *flag = &v, true
	}
	return nil
}
