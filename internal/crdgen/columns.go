package crdgen

import (
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// ageColumn is kubectl's usual last column, added unless the chart declares a column named Age.
var ageColumn = apiextensionsv1.CustomResourceColumnDefinition{
	Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp",
}

// columnTypes are the types a printer column may have.
var columnTypes = []string{"integer", "number", "string", "boolean", "date"}

const columnsExample = `  - name: Phase
    type: string
    jsonPath: .status.phase
    description: Summary of the state.
  - name: Revision
    type: integer
    jsonPath: .status.release.revision
    priority: 1`

// printerColumns reads the chart's printer columns, in order, and appends Age unless declared.
func (a annotations) printerColumns() ([]apiextensionsv1.CustomResourceColumnDefinition, error) {
	var cols []apiextensionsv1.CustomResourceColumnDefinition
	if _, err := a.decode(AnnotationPrinterColumns, &cols, columnsExample); err != nil {
		return nil, err
	}
	age := false
	for i, c := range cols {
		switch {
		case c.Name == "" || c.JSONPath == "":
			return nil, a.fail(AnnotationPrinterColumns, "column %d needs a name and a jsonPath, for example:\n%s",
				i+1, columnsExample)
		case !strings.HasPrefix(c.JSONPath, "."):
			return nil, a.fail(AnnotationPrinterColumns, "column %s: jsonPath %q must start with \".\", such as "+
				"\".status.phase\"", c.Name, c.JSONPath)
		case !slices.Contains(columnTypes, c.Type):
			return nil, a.fail(AnnotationPrinterColumns, "column %s: type %q is not one of %s", c.Name, c.Type,
				strings.Join(columnTypes, ", "))
		case c.Priority < 0:
			return nil, a.fail(AnnotationPrinterColumns, "column %s: priority must be 0 (shown) or more (kubectl "+
				"get -o wide)", c.Name)
		}
		age = age || c.Name == ageColumn.Name
	}
	if !age {
		cols = append(cols, ageColumn)
	}
	return cols, nil
}

// scale reads the chart's scale subresource; nil when the chart declares none.
func (a annotations) scale() (*apiextensionsv1.CustomResourceSubresourceScale, error) {
	var s apiextensionsv1.CustomResourceSubresourceScale
	const example = "  specReplicasPath: .spec.replicas\n  statusReplicasPath: .status.replicas"
	found, err := a.decode(AnnotationScale, &s, example)
	if err != nil || !found {
		return nil, err
	}
	switch {
	case !strings.HasPrefix(s.SpecReplicasPath, ".spec."):
		return nil, a.fail(AnnotationScale, "specReplicasPath %q must be a path under .spec, such as "+
			"\".spec.replicas\"", s.SpecReplicasPath)
	case !strings.HasPrefix(s.StatusReplicasPath, ".status."):
		return nil, a.fail(AnnotationScale, "statusReplicasPath %q must be a path under .status, such as "+
			"\".status.replicas\" (which rudder writes)", s.StatusReplicasPath)
	case s.LabelSelectorPath != nil && !strings.HasPrefix(*s.LabelSelectorPath, ".status.") &&
		!strings.HasPrefix(*s.LabelSelectorPath, ".spec."):
		return nil, a.fail(AnnotationScale, "labelSelectorPath %q must be a path under .spec or .status",
			*s.LabelSelectorPath)
	}
	return &s, nil
}
