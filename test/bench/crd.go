package bench

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// The WebApp kinds of the two operator columns. Both serve charts/webapp and
// share the spec schema; the baseline's lives in a group of its own, so that
// all columns share one cluster without swapping CRDs.
var (
	rudderWebApp   = schema.GroupVersionKind{Group: "webapp.my.domain", Version: "v1", Kind: "WebApp"}
	baselineWebApp = schema.GroupVersionKind{Group: "baseline.bench.rudder.dev", Version: "v1", Kind: "WebApp"}
)

// rudderCRDFile is rudder's WebApp CRD, relative to the repository root.
const rudderCRDFile = "config/crd/bases/webapp.my.domain_webapps.yaml"

// baselineCRD derives the baseline's CRD from rudder's WebApp CRD (the YAML
// of rudderCRDFile): the same kind and spec schema in group, under the
// resource names baselinewebapps and baselinewebapp and with no short names
// or categories (so that `kubectl get webapp` and `kubectl get wa` still mean
// rudder's, even to a kubectl whose discovery cache saw this CRD), and an
// open status with the status subresource on, because helm-operator-plugins
// writes conditions without reason or message and status.deployedRelease,
// which rudder's status schema refuses.
func baselineCRD(rudderCRD []byte, group string) (*unstructured.Unstructured, error) {
	doc := firstDocument(rudderCRD)
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(doc, &crd.Object); err != nil {
		return nil, fmt.Errorf("reading rudder's CRD: %w", err)
	}
	if crd.GetKind() != "CustomResourceDefinition" {
		return nil, fmt.Errorf("reading rudder's CRD: got kind %q, want CustomResourceDefinition", crd.GetKind())
	}
	plural, _, err := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	if err != nil || plural == "" {
		return nil, errors.New("reading rudder's CRD: no spec.names.plural")
	}
	singular, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "singular")
	if singular == "" {
		singular = strings.ToLower(crd.GetKind())
	}
	plural, singular = "baseline"+plural, "baseline"+singular
	if err := unstructured.SetNestedField(crd.Object, plural, "spec", "names", "plural"); err != nil {
		return nil, err
	}
	if err := unstructured.SetNestedField(crd.Object, singular, "spec", "names", "singular"); err != nil {
		return nil, err
	}
	crd.SetName(plural + "." + group)
	crd.SetAnnotations(nil)
	crd.SetLabels(nil)
	if err := unstructured.SetNestedField(crd.Object, group, "spec", "group"); err != nil {
		return nil, err
	}
	unstructured.RemoveNestedField(crd.Object, "spec", "names", "shortNames")
	unstructured.RemoveNestedField(crd.Object, "spec", "names", "categories")
	unstructured.RemoveNestedField(crd.Object, "status")

	versions, _, err := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if err != nil || len(versions) == 0 {
		return nil, errors.New("reading rudder's CRD: no spec.versions")
	}
	for i, v := range versions {
		version, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("reading rudder's CRD: spec.versions[%d] is not an object", i)
		}
		openStatus := map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
		if err := unstructured.SetNestedField(version, openStatus, "schema", "openAPIV3Schema", "properties", "status"); err != nil {
			return nil, err
		}
		if err := unstructured.SetNestedField(version, map[string]any{}, "subresources", "status"); err != nil {
			return nil, err
		}
		versions[i] = version
	}
	if err := unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions"); err != nil {
		return nil, err
	}
	return crd, nil
}

// firstDocument returns the first non-empty YAML document of data, without
// the comments and "---" before it.
func firstDocument(data []byte) []byte {
	for _, doc := range bytes.Split(data, []byte("\n---")) {
		doc = bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(doc), []byte("---")))
		if len(bytes.TrimSpace(stripComments(doc))) > 0 {
			return doc
		}
	}
	return nil
}

// stripComments drops whole-line YAML comments.
func stripComments(doc []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line)
		}
	}
	return bytes.Join(out, []byte("\n"))
}
