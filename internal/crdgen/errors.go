package crdgen

import (
	"fmt"
	"strings"
)

// SchemaError is a problem with a chart's values.schema.json, or with a schema in one of its annotations.
type SchemaError struct {
	// Chart is the chart's name.
	Chart string
	// Path is the value the schema describes, such as ".spec.image.tag"; empty for the whole document.
	Path string
	// Keyword is the JSON Schema keyword at fault, such as "$ref"; empty when none is.
	Keyword string
	// Problem says what is wrong and how to fix it.
	Problem string
}

func (e *SchemaError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "chart %s: schema", e.Chart)
	if e.Path != "" {
		fmt.Fprintf(&b, " of %s", e.Path)
	}
	if e.Keyword != "" {
		fmt.Fprintf(&b, ": %s", e.Keyword)
	}
	fmt.Fprintf(&b, ": %s", e.Problem)
	return b.String()
}

// AnnotationError is a Chart.yaml annotation of rudder's convention that cannot be used.
type AnnotationError struct {
	// Chart is the chart's name.
	Chart string
	// Annotation is the annotation's key, such as "rudder.dev/printer-columns".
	Annotation string
	// Problem says what is wrong and how to fix it.
	Problem string
}

func (e *AnnotationError) Error() string {
	return fmt.Sprintf("chart %s: Chart.yaml annotation %s: %s", e.Chart, e.Annotation, e.Problem)
}
