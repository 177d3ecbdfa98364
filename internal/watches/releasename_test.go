package watches_test

import (
	"strings"
	"testing"

	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/rudder-operator/rudder/internal/watches"
)

func TestWatch_ReleaseName(t *testing.T) {
	a, b, c, x := "a", strings.Repeat("b", 36), strings.Repeat("c", 10), strings.Repeat("x", 36)
	// The hashed names are golden: a new release name for an existing custom resource would orphan its release.
	tests := []struct {
		name   string
		kind   string
		crName string
		want   string
	}{
		{name: "short", kind: "WebApp", crName: "shop", want: "webapp-shop"},
		{name: "another kind", kind: "Database", crName: "shop", want: "database-shop"},
		{name: "dotted name", kind: "WebApp", crName: "shop.example.com", want: "webapp-shop.example.com"},
		{name: "53 characters kept", kind: "WebApp", crName: strings.Repeat(a, 46), want: "webapp-" + strings.Repeat(a, 46)},
		{name: "54 characters cut", kind: "WebApp", crName: strings.Repeat(a, 47), want: "webapp-" + strings.Repeat(a, 37) + "-07e11770"},
		{name: "longest object name", kind: "WebApp", crName: strings.Repeat(a, 253), want: "webapp-" + strings.Repeat(a, 37) + "-8e0d568e"},
		{name: "cut at a dot", kind: "WebApp", crName: x + ".example.com", want: "webapp-" + x + "-e724f33b"},
		{name: "cut in dashes", kind: "WebApp", crName: b + "-----" + c, want: "webapp-" + b + "-b3ac4c2f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := watches.Watch{GVK: schema.GroupVersionKind{Group: "webapp.my.domain", Version: "v1", Kind: tt.kind}}
			got := w.ReleaseName(tt.crName)
			if got != tt.want {
				t.Errorf("ReleaseName(%q) = %q, want %q", tt.crName, got, tt.want)
			}
			if err := chartutil.ValidateReleaseName(got); err != nil {
				t.Errorf("ReleaseName(%q) = %q, which Helm rejects: %v", tt.crName, got, err)
			}
			if again := w.ReleaseName(tt.crName); again != got {
				t.Errorf("ReleaseName(%q) = %q, then %q; want it stable", tt.crName, got, again)
			}
		})
	}
}

func TestWatch_ReleaseName_Distinct(t *testing.T) {
	webApp := watches.Watch{GVK: schema.GroupVersionKind{Group: "webapp.my.domain", Version: "v1", Kind: "WebApp"}}
	database := watches.Watch{GVK: schema.GroupVersionKind{Group: "db.my.domain", Version: "v1", Kind: "Database"}}
	long := strings.Repeat("a", 60)
	tests := []struct {
		name string
		a, b string
	}{
		{name: "two kinds, one custom resource name", a: webApp.ReleaseName("shop"), b: database.ReleaseName("shop")},
		{name: "two kinds, one long custom resource name", a: webApp.ReleaseName(long), b: database.ReleaseName(long)},
		{name: "long names differing after the cut", a: webApp.ReleaseName(long + "-1"), b: webApp.ReleaseName(long + "-2")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.a == tt.b {
				t.Errorf("both release names are %q; want them distinct", tt.a)
			}
		})
	}
}
