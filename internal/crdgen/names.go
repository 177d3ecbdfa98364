package crdgen

import (
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// defaultCategories puts every kind rudder serves in `kubectl get rudder`.
var defaultCategories = []string{"rudder"}

// names returns the CRD's names for kind, from the chart's annotations or the conventions.
func (a annotations) names(kind string) (apiextensionsv1.CustomResourceDefinitionNames, error) {
	n := apiextensionsv1.CustomResourceDefinitionNames{
		Kind:       kind,
		ListKind:   kind + "List",
		Singular:   strings.ToLower(kind),
		Plural:     Plural(kind),
		ShortNames: a.list(AnnotationShortNames, nil),
		Categories: a.list(AnnotationCategories, defaultCategories),
	}
	if v, ok := a.get(AnnotationSingular); ok {
		n.Singular = v
	}
	if v, ok := a.get(AnnotationPlural); ok {
		n.Plural = v
	}
	checks := []struct {
		key    string
		values []string
	}{
		{AnnotationSingular, []string{n.Singular}},
		{AnnotationPlural, []string{n.Plural}},
		{AnnotationShortNames, n.ShortNames},
		{AnnotationCategories, n.Categories},
	}
	for _, c := range checks {
		for _, v := range c.values {
			if problems := validation.IsDNS1035Label(v); len(problems) > 0 {
				return n, a.fail(c.key, "%q is not a valid resource name (%s); use lower-case letters, digits and "+
					"'-', starting with a letter, such as %q", v, strings.Join(problems, "; "), strings.ToLower(kind))
			}
		}
	}
	if n.Singular == n.Plural {
		return n, a.fail(AnnotationPlural, "%q is also the singular; set a plural that differs, such as %q",
			n.Plural, Plural(n.Singular))
	}
	return n, nil
}

// Plural returns the English plural of kind in lower case, as resource names are written: "Database" →
// "databases", "Policy" → "policies", "Ingress" → "ingresses".
func Plural(kind string) string {
	s := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(s, "s"), strings.HasSuffix(s, "x"), strings.HasSuffix(s, "z"),
		strings.HasSuffix(s, "ch"), strings.HasSuffix(s, "sh"):
		return s + "es"
	case strings.HasSuffix(s, "y") && len(s) > 1 && !strings.ContainsRune("aeiou", rune(s[len(s)-2])):
		return s[:len(s)-1] + "ies"
	default:
		return s + "s"
	}
}

// approvalAnnotation is what the API server wants on a CRD of a group under k8s.io or kubernetes.io.
const approvalAnnotation = "api-approved.kubernetes.io"

// crdAnnotations reads the annotations the CRD carries, and checks that a protected group has its approval.
func (a annotations) crdAnnotations(group string) (map[string]string, error) {
	var out map[string]string
	if _, err := a.decode(AnnotationCRDAnnotations, &out, `  example.com/owner: team-a`); err != nil {
		return nil, err
	}
	protected := group == "k8s.io" || group == "kubernetes.io" ||
		strings.HasSuffix(group, ".k8s.io") || strings.HasSuffix(group, ".kubernetes.io")
	if _, approved := out[approvalAnnotation]; protected && !approved {
		return nil, a.fail(AnnotationCRDAnnotations, "the group %s is under k8s.io or kubernetes.io, and the API "+
			"server refuses its CRD without the annotation %s; add it, for example:\n  %s: |\n    %s: \"unapproved, "+
			"experimental-only\"\n(or the URL of the approving pull request), or move the kind to a group of your own",
			group, approvalAnnotation, AnnotationCRDAnnotations, approvalAnnotation)
	}
	return out, nil
}

// describeKind is how messages name a kind.
func describeKind(kind, group, version string) string {
	return fmt.Sprintf("%s (%s/%s)", kind, group, version)
}
