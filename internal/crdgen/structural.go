package crdgen

import (
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// checkStructural reports, in a chart author's terms, the usual reasons why the schema s of the value at path
// would not be structural: the API server refuses a CRD unless every value has one type.
func (c *converter) checkStructural(path string, s *apiextensionsv1.JSONSchemaProps) error {
	if c.junctions > 0 {
		return nil // a branch of oneOf, anyOf, allOf or not only validates
	}
	preserve := s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
	switch {
	case s.Type == "" && !s.XIntOrString && !preserve:
		return c.errorf(path, "type", "missing, and none follows from the other keywords: a CRD needs the type of "+
			`every value; add "type" (object, array, string, integer, number or boolean), or `+
			`"x-kubernetes-preserve-unknown-fields": true for a value of any type`)
	case s.Type == "array" && s.Items == nil:
		return c.errorf(path, "items", `missing: a CRD needs the schema of a list's items; add "items"`)
	}
	return nil
}

// checkServer checks schema, a whole openAPIV3Schema, with the API server's own structural rules: a last guard
// for what checkStructural does not explain.
func checkServer(chart string, schema *apiextensionsv1.JSONSchemaProps) error {
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(schema, &internal, nil); err != nil {
		return fmt.Errorf("chart %s: converting the CRD schema: %w", chart, err)
	}
	s, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return fmt.Errorf("chart %s: the CRD schema is not structural: %w", chart, err)
	}
	if errs := structuralschema.ValidateStructural(field.NewPath("openAPIV3Schema"), s); len(errs) > 0 {
		return fmt.Errorf("chart %s: the CRD schema is not structural, so the API server would refuse it: %w",
			chart, errs.ToAggregate())
	}
	return nil
}
