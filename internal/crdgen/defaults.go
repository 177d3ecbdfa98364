package crdgen

import apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

// notRequired drops from s, and from the objects under its properties, every
// required property that defaults (the chart's values.yaml at the same path)
// supplies: Helm merges the chart's values under a resource's spec before it
// validates them, so a spec without such a value is valid to Helm, and must
// be to the API server too. A property whose default is null is not supplied.
func notRequired(s *apiextensionsv1.JSONSchemaProps, defaults map[string]any) {
	if s == nil || defaults == nil {
		return
	}
	var kept []string
	for _, name := range s.Required {
		if defaults[name] == nil {
			kept = append(kept, name)
		}
	}
	s.Required = kept
	for name, p := range s.Properties {
		if sub, ok := defaults[name].(map[string]any); ok {
			notRequired(&p, sub)
			s.Properties[name] = p
		}
	}
}
