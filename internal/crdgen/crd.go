package crdgen

import (
	"encoding/json"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/internal/watches"
)

// HookResolver returns the hooks of the names a watches entry lists; *hook.Registry is one.
type HookResolver interface {
	Resolve(names []string) ([]hook.Hook, error)
}

// Generator makes the CustomResourceDefinition of each kind of a watches file from its chart.
type Generator struct {
	// Hooks resolves each entry's hooks, whose StatusSchema adds status keys. Nil means no entry may list hooks.
	Hooks HookResolver
	// Warn receives what the CRDs leave out and why, one message per call. Nil discards warnings.
	Warn func(message string)
}

// CRD returns the CustomResourceDefinition of w's kind.
func (g *Generator) CRD(w watches.Watch) (*apiextensionsv1.CustomResourceDefinition, error) {
	c, err := w.LoadChart()
	if err != nil {
		return nil, fmt.Errorf("kind %s: %w", w.GVK.Kind, err)
	}
	hooks, err := g.hooks(w)
	if err != nil {
		return nil, err
	}
	a := annotations{chart: c.Name(), all: c.Annotations(), warn: g.Warn}
	a.warnUnknown()
	names, err := a.names(w.GVK.Kind)
	if err != nil {
		return nil, err
	}
	crdAnnotations, err := a.crdAnnotations(w.GVK.Group)
	if err != nil {
		return nil, err
	}
	version, err := g.version(w, c, a, hooks)
	if err != nil {
		return nil, err
	}
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta: metav1.TypeMeta{APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        names.Plural + "." + w.GVK.Group,
			Annotations: crdAnnotations,
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group:    w.GVK.Group,
			Names:    names,
			Scope:    apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{version},
		},
	}, nil
}

func (g *Generator) hooks(w watches.Watch) ([]hook.Hook, error) {
	if len(w.Hooks) == 0 {
		return nil, nil
	}
	if g.Hooks == nil {
		return nil, fmt.Errorf("kind %s lists hooks %s, but the generator knows none", w.GVK.Kind, strings.Join(w.Hooks, ", "))
	}
	hooks, err := g.Hooks.Resolve(w.Hooks)
	if err != nil {
		return nil, fmt.Errorf("kind %s: field \"hooks\": %w", w.GVK.Kind, err)
	}
	return hooks, nil
}

// version returns the one served and stored version of w's kind.
func (g *Generator) version(w watches.Watch, c *helm.Chart, a annotations, hooks []hook.Hook) (apiextensionsv1.CustomResourceDefinitionVersion, error) {
	v := apiextensionsv1.CustomResourceDefinitionVersion{Name: w.GVK.Version, Served: true, Storage: true}
	schema, err := g.schema(w, c, a, hooks)
	if err != nil {
		return v, err
	}
	if v.AdditionalPrinterColumns, err = a.printerColumns(); err != nil {
		return v, err
	}
	scale, err := a.scale()
	if err != nil {
		return v, err
	}
	v.Schema = &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: schema}
	v.Subresources = &apiextensionsv1.CustomResourceSubresources{
		Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
		Scale:  scale,
	}
	return v, nil
}

// schema returns the openAPIV3Schema of the whole custom resource.
func (g *Generator) schema(w watches.Watch, c *helm.Chart, a annotations, hooks []hook.Hook) (*apiextensionsv1.JSONSchemaProps, error) {
	spec, err := g.spec(c)
	if err != nil {
		return nil, err
	}
	chartStatus, err := a.statusSchema()
	if err != nil {
		return nil, err
	}
	status, err := statusSchema(c.Name(), w.GVK.Kind, hooks, chartStatus)
	if err != nil {
		return nil, err
	}
	metadata, err := metadataSchema(a)
	if err != nil {
		return nil, err
	}
	rules, err := a.validations(AnnotationValidations, "  - rule: self.metadata.name != 'default'\n    message: a WebApp must not be named default")
	if err != nil {
		return nil, err
	}
	root := &apiextensionsv1.JSONSchemaProps{
		Description: strings.TrimSpace(c.Description()),
		Type:        "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"apiVersion": {Type: "string", Description: apiVersionDescription},
			"kind":       {Type: "string", Description: kindDescription},
			"metadata":   metadata,
			"spec":       spec,
			"status":     status,
		},
		XValidations: rules,
	}
	if len(spec.Required) > 0 {
		root.Required = []string{"spec"}
	}
	return root, checkServer(c.Name(), root)
}

// spec converts the chart's values.schema.json; a chart without one takes any values.
func (g *Generator) spec(c *helm.Chart) (apiextensionsv1.JSONSchemaProps, error) {
	if len(c.Schema()) == 0 {
		if g.Warn != nil {
			g.Warn(fmt.Sprintf("chart %s has no values.schema.json: its CRD accepts any spec, unchecked; add a "+
				"values.schema.json describing every value", c.Name()))
		}
		return apiextensionsv1.JSONSchemaProps{
			Type:                   "object",
			Description:            fmt.Sprintf("Values of the chart %s.", c.Name()),
			XPreserveUnknownFields: ptrTo(true),
		}, nil
	}
	spec, err := convertDocument(c.Name(), c.Schema(), g.Warn)
	if err != nil {
		return spec, err
	}
	notRequired(&spec, c.Defaults())
	return spec, nil
}

// metadataSchema declares metadata, with the chart's schema of metadata.name when it has one.
func metadataSchema(a annotations) (apiextensionsv1.JSONSchemaProps, error) {
	meta := apiextensionsv1.JSONSchemaProps{Type: "object"}
	var raw json.RawMessage
	found, err := a.decode(AnnotationNameSchema, &raw, "  maxLength: 40\n  x-kubernetes-validations:\n"+
		"    - rule: self.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')\n      message: the name must be a DNS-1035 label")
	if err != nil || !found {
		return meta, err
	}
	conv := &converter{chart: a.chart, root: node{}, warn: a.warn}
	name, err := conv.convert(".metadata.name", raw)
	if err != nil {
		return meta, a.fail(AnnotationNameSchema, "%s", strings.TrimPrefix(err.Error(), "chart "+a.chart+": "))
	}
	if name.Type != "string" {
		return meta, a.fail(AnnotationNameSchema, `a name is a string: set "type: string"`)
	}
	meta.Properties = map[string]apiextensionsv1.JSONSchemaProps{"name": name}
	return meta, nil
}

// The descriptions of apiVersion and kind, as in every Kubernetes object.
const (
	apiVersionDescription = "APIVersion defines the versioned schema of this representation of an object. Servers " +
		"should convert recognized schemas to the latest internal value, and may reject unrecognized values. More " +
		"info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
	kindDescription = "Kind is a string value representing the REST resource this object represents. Servers may " +
		"infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: " +
		"https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)
