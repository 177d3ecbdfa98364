package rbac

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/rudder-operator/rudder/internal/crdgen"
	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/internal/watches"
)

// ApplyVerbs are what Helm's kube client uses to create, update, wait for
// and delete a release's objects, and rudder to compare them (drift).
var ApplyVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}

// Input is what Compute needs to know of a kind.
type Input struct {
	// Watch is the kind's watches entry.
	Watch watches.Watch
	// Chart is what its chart renders (Render).
	Chart *Chart
	// Hooks are the kind's hooks, resolved from Watch.Hooks.
	Hooks []hook.Hook
	// Kinds are the entries of all of rudder's kinds: a resource's
	// depends-on may name any.
	Kinds []watches.Watch
}

// Rules are what an account needs to serve a kind in its namespace.
type Rules struct {
	// Namespaced apply in the resource's namespace (a Role).
	Namespaced []rbacv1.PolicyRule
	// Cluster are for the cluster-scoped kinds the chart renders (a
	// ClusterRole); empty for most kinds.
	Cluster []rbacv1.PolicyRule
	// Optional are rules only some resources need, each with why.
	Optional []Optional
	// Notes say what the computation had to guess or could not see.
	Notes []string
}

// Optional is a rule a resource needs only when it uses a feature.
type Optional struct {
	// Why names the feature.
	Why string
	// Rules are what it needs, in the resource's namespace.
	Rules []rbacv1.PolicyRule
}

// Compute returns the rules an account needs so that rudder, acting as it,
// can render (lookup), apply, wait for, test, repair and uninstall in.Chart's
// kinds and run in.Hooks, mapping kinds to resources with mapper.
func Compute(in Input, mapper meta.RESTMapper) *Rules {
	out := &Rules{}
	ns, cluster := ruleSet{}, ruleSet{}
	guessed := map[string]bool{}
	resource := func(gvk schema.GroupVersionKind) (string, bool) {
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err == nil {
			return m.Resource.Resource, m.Scope.Name() == meta.RESTScopeNameRoot
		}
		guessed[gvk.GroupKind().String()] = true
		return crdgen.Plural(gvk.Kind), false
	}
	for _, gvk := range in.Chart.Kinds {
		res, root := resource(gvk)
		if root {
			cluster.add(gvk.Group, res, ApplyVerbs...)
		} else {
			ns.add(gvk.Group, res, ApplyVerbs...)
		}
	}
	for _, gvk := range in.Chart.Lookups {
		res, root := resource(gvk)
		if root {
			cluster.add(gvk.Group, res, "get", "list")
		} else {
			ns.add(gvk.Group, res, "get", "list")
		}
	}
	if in.Chart.Tests {
		ns.add("", "pods", "get", "list", "watch", "create", "delete")
		ns.add("", "pods/log", "get")
	}
	// rudder's owner reference blocks the owner's deletion, which the API
	// server's OwnerReferencesPermissionEnforcement, where enabled, lets
	// only an account that may update the owner's finalizers set.
	ns.add(in.Watch.GVK.Group, ResourceOf(in.Watch, mapper)+"/finalizers", "update")
	for _, h := range in.Hooks {
		if p, ok := h.(hook.Permissioner); ok {
			for _, r := range p.Rules() {
				ns.addRule(r)
			}
		}
	}
	for _, src := range in.Watch.ValuesFrom {
		ns.addNamed("", strings.ToLower(src.Kind)+"s", src.Name, "get")
	}
	out.Namespaced, out.Cluster = ns.rules(), cluster.rules()
	out.Optional = append(out.Optional, Optional{
		Why:   "resources that take values from the annotation rudder.dev/values-from",
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}, Verbs: []string{"get"}}},
	})
	deps := ruleSet{}
	for _, w := range in.Kinds {
		deps.add(w.GVK.Group, ResourceOf(w, mapper), "get")
	}
	out.Optional = append(out.Optional, Optional{
		Why:   "resources that wait for others with the annotation rudder.dev/depends-on",
		Rules: deps.rules(),
	})
	if len(guessed) > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("resource names guessed from the kind, assumed namespaced (kinds the mapper does not know): %s",
			strings.Join(sortedKeys(guessed), ", ")))
	}
	if len(in.Chart.Untried) > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("no values tried rendered with %s true: add a ci/ values file that sets it, "+
			"or the objects it makes may be missing", strings.Join(in.Chart.Untried, ", ")))
	}
	return out
}

// ResourceOf returns the resource of one of rudder's kinds: the API
// server's name when mapper knows the kind, else the name rudder's CRD
// generator gives it (the chart's annotation, or the plural of the kind).
func ResourceOf(w watches.Watch, mapper meta.RESTMapper) string {
	if m, err := mapper.RESTMapping(w.GVK.GroupKind(), w.GVK.Version); err == nil {
		return m.Resource.Resource
	}
	if c, err := w.LoadChart(); err == nil {
		if p := c.Annotations()[crdgen.AnnotationPlural]; p != "" {
			return p
		}
	}
	return crdgen.Plural(w.GVK.Kind)
}

// ruleSet gathers verbs by API group, resource and resource name.
type ruleSet map[ruleKey]map[string]bool

type ruleKey struct{ group, resource, name string }

func (s ruleSet) add(group, resource string, verbs ...string) {
	s.addNamed(group, resource, "", verbs...)
}

func (s ruleSet) addNamed(group, resource, name string, verbs ...string) {
	k := ruleKey{group, resource, name}
	if s[k] == nil {
		s[k] = map[string]bool{}
	}
	for _, v := range verbs {
		s[k][v] = true
	}
}

func (s ruleSet) addRule(r rbacv1.PolicyRule) {
	names := r.ResourceNames
	if len(names) == 0 {
		names = []string{""}
	}
	for _, g := range r.APIGroups {
		for _, res := range r.Resources {
			for _, n := range names {
				s.addNamed(g, res, n, r.Verbs...)
			}
		}
	}
}

// rules returns the set as few rules as it takes: one per API group and set
// of verbs, resources sorted; a resource name gets a rule of its own.
func (s ruleSet) rules() []rbacv1.PolicyRule {
	type merged struct {
		group, verbs, name string
	}
	byKey := map[merged]*rbacv1.PolicyRule{}
	var keys []merged
	for k, vs := range s {
		verbs := ordered(vs)
		// A resource named and unnamed: the unnamed verbs cover the named.
		if k.name != "" && covers(s[ruleKey{k.group, k.resource, ""}], vs) {
			continue
		}
		m := merged{k.group, strings.Join(verbs, ","), k.name}
		r, ok := byKey[m]
		if !ok {
			r = &rbacv1.PolicyRule{APIGroups: []string{k.group}, Verbs: verbs}
			if k.name != "" {
				r.ResourceNames = []string{k.name}
			}
			byKey[m] = r
			keys = append(keys, m)
		}
		r.Resources = append(r.Resources, k.resource)
	}
	out := make([]rbacv1.PolicyRule, 0, len(keys))
	for _, k := range keys {
		r := byKey[k]
		sort.Strings(r.Resources)
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.APIGroups[0] != b.APIGroups[0] {
			return a.APIGroups[0] < b.APIGroups[0]
		}
		if a.Resources[0] != b.Resources[0] {
			return a.Resources[0] < b.Resources[0]
		}
		return strings.Join(a.ResourceNames, ",") < strings.Join(b.ResourceNames, ",")
	})
	return out
}

// verbOrder is the order verbs are printed in, as kubectl's docs write them.
var verbOrder = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

// ordered returns the verbs of vs in verbOrder, then any other sorted.
func ordered(vs map[string]bool) []string {
	var out, other []string
	for _, v := range verbOrder {
		if vs[v] {
			out = append(out, v)
		}
	}
	for v := range vs {
		if !slices.Contains(verbOrder, v) {
			other = append(other, v)
		}
	}
	sort.Strings(other)
	return append(out, other...)
}

func covers(all, some map[string]bool) bool {
	if all == nil {
		return false
	}
	for v := range some {
		if !all[v] && !all["*"] {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
