package rbac

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/rudder-operator/rudder"
	"github.com/rudder-operator/rudder/internal/manager"
	"github.com/rudder-operator/rudder/internal/valuesfrom"
	"github.com/rudder-operator/rudder/internal/watches"
	"github.com/rudder-operator/rudder/test/testenv"
)

// embedded computes the rules of each embedded kind, as `rudder rbac` does
// without a cluster (SchemeMapper), with the kind's sample.
func embedded(t *testing.T) map[string]*Rules {
	t.Helper()
	ws, err := watches.Load(rudder.Files, rudder.WatchesFile)
	if err != nil {
		t.Fatal(err)
	}
	registry, err := manager.BuiltinHooks()
	if err != nil {
		t.Fatal(err)
	}
	root, err := testenv.Root()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*Rules{}
	for _, w := range ws {
		sample, err := Sample(filepath.Join(root, "config", "samples"), w.GVK)
		if err != nil {
			t.Fatal(err)
		}
		if sample == nil {
			t.Fatalf("no sample of %s in config/samples", w.GVK.Kind)
		}
		chart, err := Render(context.Background(), w, "team-a", sample)
		if err != nil {
			t.Fatal(err)
		}
		hooks, err := registry.Resolve(w.Hooks)
		if err != nil {
			t.Fatal(err)
		}
		out[w.GVK.Kind] = Compute(Input{Watch: w, Chart: chart, Hooks: hooks, Kinds: ws}, SchemeMapper())
	}
	return out
}

// allows reports whether rules allow verb on group/resource, unnamed.
func allows(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	for _, r := range rules {
		if len(r.ResourceNames) == 0 && slices.Contains(r.APIGroups, group) &&
			slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}

// access is a verb on a resource of an API group.
type access struct{ group, resource, verb string }

func TestCompute_EmbeddedKinds(t *testing.T) {
	rules := embedded(t)
	tests := []struct {
		kind     string
		want     []access
		wantNone []access
	}{
		{
			kind: "WebApp",
			want: []access{
				{"apps", "deployments", "create"}, {"apps", "deployments", "patch"}, {"apps", "deployments", "delete"},
				{"", "services", "create"}, {"", "services", "watch"},
				{"networking.k8s.io", "ingresses", "create"},
				{"", "persistentvolumeclaims", "create"},
				{"autoscaling", "horizontalpodautoscalers", "create"},
				{"", "pods", "create"}, {"", "pods", "delete"}, {"", "pods/log", "get"}, // the chart's test
				{"webapp.my.domain", "webapps/finalizers", "update"},
			},
			// The chart renders no Secret: its account needs no right on Secrets.
			wantNone: []access{{"", "secrets", "get"}, {"", "secrets", "create"}, {"", "configmaps", "get"}},
		},
		{
			kind: "Database",
			want: []access{
				{"apps", "statefulsets", "create"}, {"apps", "statefulsets", "get"}, // rendered and looked up
				{"", "services", "create"},
				{"", "secrets", "create"}, {"", "secrets", "get"}, // password
				{"batch", "cronjobs", "create"}, {"batch", "cronjobs", "update"}, {"batch", "jobs", "create"}, // backup
				{"", "persistentvolumeclaims", "create"}, {"", "persistentvolumeclaims", "patch"}, // backup, volume
				{"", "pods", "list"}, // version
			},
			wantNone: []access{{"", "pods/log", "get"}, {"apps", "deployments", "create"}, {"", "secrets", "list"}},
		},
		{
			kind:     "Network",
			want:     []access{{"", "configmaps", "create"}, {"", "configmaps", "delete"}},
			wantNone: []access{{"", "secrets", "get"}, {"", "pods", "create"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			r := rules[tt.kind]
			if r == nil {
				t.Fatalf("no rules for %s", tt.kind)
			}
			for _, a := range tt.want {
				if !allows(r.Namespaced, a.group, a.resource, a.verb) {
					t.Errorf("the Role does not allow %s on %s (group %q): %+v", a.verb, a.resource, a.group, r.Namespaced)
				}
			}
			for _, a := range tt.wantNone {
				if allows(r.Namespaced, a.group, a.resource, a.verb) {
					t.Errorf("the Role allows %s on %s (group %q), which the kind does not need", a.verb, a.resource, a.group)
				}
			}
			if len(r.Cluster) > 0 {
				t.Errorf("cluster rules for a chart rendering only namespaced kinds: %+v", r.Cluster)
			}
			for _, n := range r.Notes {
				t.Errorf("unexpected note (the embedded kinds need no guess with the scheme): %s", n)
			}
			var optional []rbacv1.PolicyRule
			for _, o := range r.Optional {
				optional = append(optional, o.Rules...)
			}
			for _, a := range []access{{"", "secrets", "get"}, {"", "configmaps", "get"}, {"database.my.domain", "databases", "get"}} {
				if !allows(optional, a.group, a.resource, a.verb) {
					t.Errorf("the optional rules do not allow %s on %s: %+v", a.verb, a.resource, r.Optional)
				}
			}
		})
	}
}

func TestRuleSet_Rules(t *testing.T) {
	tests := []struct {
		name string
		add  func(s ruleSet)
		want []rbacv1.PolicyRule
	}{
		{
			name: "same group and verbs merge",
			add: func(s ruleSet) {
				s.add("", "services", "get", "create")
				s.add("", "configmaps", "create", "get")
			},
			want: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps", "services"}, Verbs: []string{"get", "create"}}},
		},
		{
			name: "verbs of one resource union",
			add: func(s ruleSet) {
				s.add("batch", "jobs", "get")
				s.addRule(rbacv1.PolicyRule{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"create", "get"}})
			},
			want: []rbacv1.PolicyRule{{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"get", "create"}}},
		},
		{
			name: "a named resource the unnamed rule covers is dropped",
			add: func(s ruleSet) {
				s.add("", "secrets", "get", "create")
				s.addNamed("", "secrets", "db", "get")
			},
			want: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "create"}}},
		},
		{
			name: "a named resource keeps its own rule",
			add: func(s ruleSet) {
				s.addNamed("", "secrets", "db", "get")
				s.add("apps", "deployments", "get")
			},
			want: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"db"}, Verbs: []string{"get"}},
				{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ruleSet{}
			tt.add(s)
			if got := s.rules(); !equality.Semantic.DeepEqual(got, tt.want) {
				t.Errorf("rules() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestBooleanPaths(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   [][]string
	}{
		{name: "none", schema: `{"type":"object","properties":{"a":{"type":"string"}}}`, want: [][]string{}},
		{name: "nested, sorted", schema: `{"properties":{"z":{"type":"boolean"},"a":{"properties":{"enabled":{"type":"boolean"}}}}}`,
			want: [][]string{{"a", "enabled"}, {"z"}}},
		{name: "through combinators", schema: `{"allOf":[{"properties":{"x":{"type":"boolean"}}}],"if":{"properties":{"y":{"type":"boolean"}}}}`,
			want: [][]string{{"x"}, {"y"}}},
		{name: "not inside arrays", schema: `{"properties":{"l":{"type":"array","items":{"properties":{"b":{"type":"boolean"}}}}}}`,
			want: [][]string{}},
		{name: "no schema", schema: ``, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := booleanPaths([]byte(tt.schema)); !equality.Semantic.DeepEqual(got, tt.want) {
				t.Errorf("booleanPaths = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSchemeMapper(t *testing.T) {
	tests := []struct {
		name     string
		gvk      schema.GroupVersionKind
		resource string
		root     bool
	}{
		{name: "namespaced", gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, resource: "deployments"},
		{name: "irregular plural", gvk: schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}, resource: "ingresses"},
		{name: "cluster-scoped", gvk: schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, resource: "clusterroles", root: true},
	}
	m := SchemeMapper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mapping, err := m.RESTMapping(tt.gvk.GroupKind(), tt.gvk.Version)
			if err != nil {
				t.Fatal(err)
			}
			if mapping.Resource.Resource != tt.resource || (mapping.Scope.Name() == meta.RESTScopeNameRoot) != tt.root {
				t.Errorf("mapping = %s (scope %s), want %s (cluster-scoped %v)", mapping.Resource.Resource, mapping.Scope.Name(), tt.resource, tt.root)
			}
		})
	}
}

func TestCompute_Inputs(t *testing.T) {
	ws, err := watches.Load(rudder.Files, rudder.WatchesFile)
	if err != nil {
		t.Fatal(err)
	}
	network := ws[0]
	for _, w := range ws {
		if w.GVK.Kind == "Network" {
			network = w
		}
	}
	clusterRole := schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
	monitor := schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor"}
	secret := schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	tests := []struct {
		name        string
		chart       Chart
		valuesFrom  []valuesfrom.Source
		wantNS      []access
		wantCluster []access
		wantNamed   string // a resource name the Role names
		wantNote    string
	}{
		{
			name:        "a cluster-scoped kind goes to the ClusterRole",
			chart:       Chart{Kinds: []schema.GroupVersionKind{clusterRole}},
			wantCluster: []access{{"rbac.authorization.k8s.io", "clusterroles", "create"}},
		},
		{
			name:     "a kind the mapper does not know is guessed, with a note",
			chart:    Chart{Kinds: []schema.GroupVersionKind{monitor}},
			wantNS:   []access{{"monitoring.coreos.com", "servicemonitors", "create"}},
			wantNote: "ServiceMonitor.monitoring.coreos.com",
		},
		{
			name:   "a lookup is read",
			chart:  Chart{Lookups: []schema.GroupVersionKind{secret}},
			wantNS: []access{{"", "secrets", "get"}, {"", "secrets", "list"}},
		},
		{
			name:   "tests run pods and read their logs",
			chart:  Chart{Tests: true},
			wantNS: []access{{"", "pods", "create"}, {"", "pods", "delete"}, {"", "pods/log", "get"}},
		},
		{
			name:       "the entry's valuesFrom is read by name",
			valuesFrom: []valuesfrom.Source{{Kind: "Secret", Name: "shared-tls"}},
			wantNamed:  "shared-tls",
		},
		{
			name:     "an untried toggle is noted",
			chart:    Chart{Untried: []string{"ingress.enabled"}},
			wantNote: "ingress.enabled",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := network
			w.ValuesFrom = tt.valuesFrom
			r := Compute(Input{Watch: w, Chart: &tt.chart, Kinds: ws}, SchemeMapper())
			for _, a := range tt.wantNS {
				if !allows(r.Namespaced, a.group, a.resource, a.verb) {
					t.Errorf("the Role does not allow %s on %s: %+v", a.verb, a.resource, r.Namespaced)
				}
			}
			for _, a := range tt.wantCluster {
				if !allows(r.Cluster, a.group, a.resource, a.verb) {
					t.Errorf("the ClusterRole does not allow %s on %s: %+v", a.verb, a.resource, r.Cluster)
				}
				if allows(r.Namespaced, a.group, a.resource, a.verb) {
					t.Errorf("the Role names cluster-scoped %s", a.resource)
				}
			}
			if len(tt.wantCluster) == 0 && len(r.Cluster) > 0 {
				t.Errorf("unexpected ClusterRole rules: %+v", r.Cluster)
			}
			objs := Objects(w.GVK, r, Account{Namespace: "team-a", Name: "deployer"}, false)
			if want := 2 + 2*min(len(r.Cluster), 1); len(objs) != want {
				t.Errorf("Objects returned %d objects, want %d", len(objs), want)
			}
			if tt.wantNamed != "" {
				named := false
				for _, rule := range r.Namespaced {
					named = named || slices.Contains(rule.ResourceNames, tt.wantNamed)
				}
				if !named {
					t.Errorf("no rule names %q: %+v", tt.wantNamed, r.Namespaced)
				}
			}
			notes := strings.Join(r.Notes, "\n")
			if (tt.wantNote == "") != (notes == "") || !strings.Contains(notes, tt.wantNote) {
				t.Errorf("notes = %q, want one naming %q", notes, tt.wantNote)
			}
		})
	}
}

func TestRender(t *testing.T) {
	ws, err := watches.Load(rudder.Files, rudder.WatchesFile)
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string]watches.Watch{}
	for _, w := range ws {
		byKind[w.GVK.Kind] = w
	}
	tests := []struct {
		kind        string
		wantKinds   []string // among what the chart renders, without a sample
		wantLookups []string
		wantTests   bool
	}{
		// The HPA, Ingress and claim come from the ci/ files and the toggles.
		{kind: "WebApp", wantKinds: []string{"Deployment", "HorizontalPodAutoscaler", "Ingress", "PersistentVolumeClaim", "Pod", "Service"}, wantTests: true},
		{kind: "Database", wantKinds: []string{"Service", "StatefulSet"}, wantLookups: []string{"StatefulSet"}},
		{kind: "Network", wantKinds: []string{"ConfigMap"}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			c, err := Render(context.Background(), byKind[tt.kind], "team-a", nil)
			if err != nil {
				t.Fatal(err)
			}
			var kinds, looked []string
			for _, k := range c.Kinds {
				kinds = append(kinds, k.Kind)
			}
			for _, k := range c.Lookups {
				looked = append(looked, k.Kind)
			}
			slices.Sort(kinds)
			if !slices.Equal(kinds, tt.wantKinds) || !slices.Equal(looked, tt.wantLookups) || c.Tests != tt.wantTests {
				t.Errorf("Render = kinds %v, lookups %v, tests %v; want %v, %v, %v", kinds, looked, c.Tests, tt.wantKinds, tt.wantLookups, tt.wantTests)
			}
			if len(c.Untried) > 0 {
				t.Errorf("toggles no values rendered: %v", c.Untried)
			}
		})
	}
}
