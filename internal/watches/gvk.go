package watches

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

var (
	// versionPattern is a Kubernetes API version: v1, v1alpha1, v2beta3.
	versionPattern = regexp.MustCompile(`^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$`)
	// kindPattern is an UpperCamelCase kind.
	kindPattern = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
)

// checkGVK checks the entry's group, version and kind.
func (e *entry) checkGVK() {
	switch g := e.gvk.Group; {
	case g == "":
		e.fail("group", nil, `missing; a custom resource needs an API group that is a domain name, such as `+
			`"webapp.example.com" (the core group "" is for built-in kinds only)`)
	case len(validation.IsDNS1123Subdomain(g)) > 0:
		e.fail("group", nil, `%q is not a valid API group (%s); use a lower-case domain name such as "webapp.example.com"`,
			g, strings.Join(validation.IsDNS1123Subdomain(g), "; "))
	case !strings.Contains(g, "."):
		e.fail("group", nil, `%q has no dot, but a CustomResourceDefinition's group must be a domain name; `+
			`use one such as "%s.example.com"`, g, g)
	}
	switch v := e.gvk.Version; {
	case v == "":
		e.fail("version", nil, "missing; set a Kubernetes API version such as v1 or v1alpha1")
	case !versionPattern.MatchString(v):
		e.fail("version", nil, "%q is not a Kubernetes API version; use v<major>, optionally followed by alpha<n> "+
			"or beta<n>, such as v1, v1alpha1 or v2beta3", v)
	}
	switch k := e.gvk.Kind; {
	case k == "":
		e.fail("kind", nil, `missing; set the custom resource's kind in UpperCamelCase, such as "WebApp"`)
	case !kindPattern.MatchString(k):
		e.fail("kind", nil, `%q is not UpperCamelCase; a kind is an upper-case letter followed by letters and `+
			`digits, such as "WebApp"`, k)
	}
}

// checkUnique reports entries whose kind is served by an earlier entry. A kind is unique within the file
// regardless of group, version and letter case: a chart serves all versions of its kind, and release names
// begin with the lower-case kind (see Watch.ReleaseName).
func checkUnique(file string, watches []Watch) []error {
	var errs []error
	first := make(map[string]int, len(watches))
	for i, w := range watches {
		if w.GVK.Kind == "" {
			continue
		}
		key := strings.ToLower(w.GVK.Kind)
		j, seen := first[key]
		if !seen {
			first[key] = i
			continue
		}
		prev := watches[j].GVK
		var problem string
		if prev.GroupKind() == w.GVK.GroupKind() {
			problem = fmt.Sprintf("entry %d (%s) serves %s already; one chart serves a kind in all its versions, "+
				"so remove one of the two entries", j+1, prev, w.GVK.GroupKind())
		} else {
			problem = fmt.Sprintf("entry %d (%s) has the same kind; Helm release names begin with the lower-case "+
				"kind, so two kinds differing only in group or letter case would share releases; rename one kind",
				j+1, prev)
		}
		errs = append(errs, &EntryError{File: file, Entry: i + 1, GVK: w.GVK, Field: "kind", Problem: problem})
	}
	return errs
}
