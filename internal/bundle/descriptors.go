package bundle

import (
	"maps"
	"slices"
	"strings"
	"unicode"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// The x-descriptors OLM's console knows (the "OLM Descriptor Reference"): each picks the widget that shows or
// edits a field.
const (
	xPodCount             = "urn:alm:descriptor:com.tectonic.ui:podCount"
	xResourceRequirements = "urn:alm:descriptor:com.tectonic.ui:resourceRequirements"
	xImagePullPolicy      = "urn:alm:descriptor:com.tectonic.ui:imagePullPolicy"
	xAdvanced             = "urn:alm:descriptor:com.tectonic.ui:advanced"
	xBooleanSwitch        = "urn:alm:descriptor:com.tectonic.ui:booleanSwitch"
	xNumber               = "urn:alm:descriptor:com.tectonic.ui:number"
	xText                 = "urn:alm:descriptor:com.tectonic.ui:text"
	xSelectPrefix         = "urn:alm:descriptor:com.tectonic.ui:select:"
	xStatusText           = "urn:alm:descriptor:text"
	xPhase                = "urn:alm:descriptor:io.kubernetes.phase"
	xPhaseReason          = "urn:alm:descriptor:io.kubernetes.phase:reason"
	xConditions           = "urn:alm:descriptor:io.kubernetes.conditions"
)

// specXDescriptors are the x-descriptors of the top-level spec fields that mean the same in every chart of
// this project; any other field gets the widget of its type (specTypeXDescriptors).
var specXDescriptors = map[string][]string{
	"replicas":        {xPodCount},
	"resources":       {xResourceRequirements},
	"imagePullPolicy": {xImagePullPolicy},
	// Kubernetes objects a chart renders verbatim: under "Advanced" in the creation form.
	"affinity":           {xAdvanced},
	"tolerations":        {xAdvanced},
	"nodeSelector":       {xAdvanced},
	"podSecurityContext": {xAdvanced},
	"securityContext":    {xAdvanced},
}

// statusXDescriptors are the x-descriptors of the status fields rudder's reconciler writes for every kind
// (crdgen's common status); any other field gets the widget of its type (statusTypeXDescriptors).
var statusXDescriptors = map[string][]string{
	"phase":           {xPhase},
	"message":         {xPhaseReason},
	"conditions":      {xConditions},
	"replicas":        {xPodCount},
	"readyReplicas":   {xPodCount},
	"currentReplicas": {xPodCount},
}

// ownedCRDs describes each served version of each CRD for the CSV.
func ownedCRDs(crds []crd) []operatorsv1alpha1.CRDDescription {
	var owned []operatorsv1alpha1.CRDDescription
	for _, c := range crds {
		for _, v := range c.Spec.Versions {
			if !v.Served {
				continue
			}
			d := operatorsv1alpha1.CRDDescription{
				Name:        c.Name,
				Version:     v.Name,
				Kind:        c.Spec.Names.Kind,
				DisplayName: displayName(c.Spec.Names.Kind),
			}
			if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
				root := v.Schema.OpenAPIV3Schema
				d.Description = root.Description
				d.SpecDescriptors = specDescriptors(root.Properties["spec"])
				d.StatusDescriptors = statusDescriptors(root.Properties["status"])
			}
			owned = append(owned, d)
		}
	}
	return owned
}

// specDescriptors describes each top-level field of spec, in name order.
func specDescriptors(spec apiextensionsv1.JSONSchemaProps) []operatorsv1alpha1.SpecDescriptor {
	return describe(spec, specXDescriptors, specTypeXDescriptors)
}

// statusDescriptors describes each top-level field of status, in name order.
func statusDescriptors(status apiextensionsv1.JSONSchemaProps) []operatorsv1alpha1.StatusDescriptor {
	var out []operatorsv1alpha1.StatusDescriptor
	for _, d := range describe(status, statusXDescriptors, statusTypeXDescriptors) {
		out = append(out, operatorsv1alpha1.StatusDescriptor(d)) // the two types have the same fields
	}
	return out
}

// describe describes each property of s, with the x-descriptors byName has for its name, or else those byType
// picks for its schema.
func describe(s apiextensionsv1.JSONSchemaProps, byName map[string][]string, byType func(apiextensionsv1.JSONSchemaProps) []string) []operatorsv1alpha1.SpecDescriptor {
	var out []operatorsv1alpha1.SpecDescriptor
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		field := s.Properties[name]
		x, ok := byName[name]
		if !ok {
			x = byType(field)
		}
		out = append(out, operatorsv1alpha1.SpecDescriptor{Path: name, DisplayName: displayName(name), Description: field.Description, XDescriptors: x})
	}
	return out
}

// specTypeXDescriptors picks a form widget for a field of schema s: a switch, a number, a choice of its enum or
// text. Objects and lists get none: the console edits them as YAML.
func specTypeXDescriptors(s apiextensionsv1.JSONSchemaProps) []string {
	switch {
	case s.Type == "boolean":
		return []string{xBooleanSwitch}
	case s.Type == "integer" || s.Type == "number":
		return []string{xNumber}
	case s.Type == "string" && len(s.Enum) > 0:
		var x []string
		for _, v := range s.Enum {
			x = append(x, xSelectPrefix+strings.Trim(string(v.Raw), `"`))
		}
		return x
	case s.Type == "string" || s.XIntOrString:
		return []string{xText}
	}
	return nil
}

// statusTypeXDescriptors shows a scalar status field as text; objects and lists get none.
func statusTypeXDescriptors(s apiextensionsv1.JSONSchemaProps) []string {
	if s.Type == "object" || s.Type == "array" {
		return nil
	}
	return []string{xStatusText}
}

// acronyms are the words displayName writes in capitals.
var acronyms = map[string]string{"Cidr": "CIDR", "Ip": "IP", "Tls": "TLS", "Url": "URL"}

// displayName turns a field or kind name into words: readyReplicas is "Ready Replicas", WebApp "Web App".
func displayName(name string) string {
	if name == "" {
		return ""
	}
	var words []string
	start := 0
	runes := []rune(name)
	for i := 1; i < len(runes); i++ {
		if unicode.IsUpper(runes[i]) && !unicode.IsUpper(runes[i-1]) {
			words = append(words, string(runes[start:i]))
			start = i
		}
	}
	words = append(words, string(runes[start:]))
	for i, w := range words {
		r := []rune(w)
		w = string(unicode.ToUpper(r[0])) + string(r[1:])
		if a, ok := acronyms[w]; ok {
			w = a
		}
		words[i] = w
	}
	return strings.Join(words, " ")
}
