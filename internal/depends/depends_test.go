package depends_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/rudder-operator/rudder/internal/depends"
)

var (
	webApp   = schema.GroupVersionKind{Group: "webapp.my.domain", Version: "v1", Kind: "WebApp"}
	database = schema.GroupVersionKind{Group: "database.my.domain", Version: "v1", Kind: "Database"}
	network  = schema.GroupVersionKind{Group: "samplecrd.k8s.io", Version: "v1", Kind: "Network"}
	kinds    = depends.Kinds{webApp, database, network}
)

// resource returns a custom resource of gvk in namespace shop; ready is its
// Ready condition status ("" for none), dependsOn its annotation ("" for none).
func resource(gvk schema.GroupVersionKind, name, ready, dependsOn string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace("shop")
	u.SetName(name)
	u.SetGeneration(2)
	if dependsOn != "" {
		u.SetAnnotations(map[string]string{depends.Annotation: dependsOn})
	}
	status := map[string]any{"observedGeneration": int64(2)}
	if ready != "" {
		status["conditions"] = []any{map[string]any{"type": "Ready", "status": ready, "reason": "Progressing", "message": "StatefulSet/orders is not ready"}}
	}
	u.Object["status"] = status
	return u
}

func TestParse(t *testing.T) {
	tests := []struct {
		value   string
		want    []string // Ref.Key of each
		wantErr []string
	}{
		{value: "database/orders", want: []string{"Database.database.my.domain/shop/orders"}},
		{value: " Database/orders , network/backend,,database/orders", want: []string{
			"Database.database.my.domain/shop/orders", "Network.samplecrd.k8s.io/shop/backend"}},
		{value: "data/database.database.my.domain/orders", want: []string{"Database.database.my.domain/data/orders"}},
		{value: "orders", wantErr: []string{`"orders" is not kind/name or namespace/kind/name`, "database/orders"}},
		{value: "cache/redis", wantErr: []string{`names kind "cache", which rudder does not serve`, "webapp, database, network"}},
		{value: "database/", wantErr: []string{"empty name"}},
		{value: "a/b/c/d", wantErr: []string{"is not kind/name"}},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			refs, err := kinds.Parse(resource(webApp, "shop", "", tt.value))
			if tt.wantErr != nil {
				e, ok := depends.IsError(err)
				if !ok || e.Reason != depends.ReasonInvalid {
					t.Fatalf("Parse(%q) = %v, %v; want an error of reason DependsOnInvalid", tt.value, refs, err)
				}
				for _, w := range append(tt.wantErr, depends.Annotation) {
					if !strings.Contains(e.Message, w) {
						t.Errorf("error %q lacks %q", e.Message, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range refs {
				got = append(got, r.Key())
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("Parse(%q) = %v, want %v", tt.value, got, tt.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name       string
		objects    []client.Object
		self       *unstructured.Unstructured
		wantReason depends.Reason // "" for ready
		want       []string
	}{
		{name: "no annotation", self: resource(webApp, "shop", "", "")},
		{name: "dependency ready",
			objects: []client.Object{resource(database, "orders", "True", "")},
			self:    resource(webApp, "shop", "", "database/orders")},
		{name: "dependency missing",
			self:       resource(webApp, "shop", "", "database/orders"),
			wantReason: depends.ReasonNotReady, want: []string{"Waiting for Database orders to exist"}},
		{name: "dependency not ready",
			objects:    []client.Object{resource(database, "orders", "False", ""), resource(network, "backend", "True", "")},
			self:       resource(webApp, "shop", "", "network/backend, database/orders"),
			wantReason: depends.ReasonNotReady, want: []string{"Database orders to be Ready (Ready False, Progressing: StatefulSet/orders is not ready)"}},
		{name: "dependency's spec not acted on yet",
			objects: []client.Object{func() client.Object {
				db := resource(database, "orders", "True", "")
				db.SetGeneration(3)
				return db
			}()},
			self:       resource(webApp, "shop", "", "database/orders"),
			wantReason: depends.ReasonNotReady, want: []string{"Database orders to be Ready at generation 3 (rudder has acted on 2)"}},
		{name: "cycle through two others",
			objects: []client.Object{resource(database, "orders", "True", "network/backend"),
				resource(network, "backend", "True", "webapp/shop")},
			self:       resource(webApp, "shop", "", "database/orders"),
			wantReason: depends.ReasonCycle, want: []string{"webapp/shop → database/orders → network/backend → webapp/shop"}},
		{name: "on itself",
			self:       resource(webApp, "shop", "", "webapp/shop"),
			wantReason: depends.ReasonCycle, want: []string{"webapp/shop → webapp/shop"}},
		{name: "a cycle among the others is theirs to report",
			objects: []client.Object{resource(database, "orders", "True", "network/backend"),
				resource(network, "backend", "True", "database/orders")},
			self: resource(webApp, "shop", "", "database/orders")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reader := fake.NewClientBuilder().WithObjects(tt.objects...).Build()
			err := kinds.Check(context.Background(), reader, tt.self, webApp)
			if tt.wantReason == "" {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			e, ok := depends.IsError(err)
			if !ok || e.Reason != tt.wantReason {
				t.Fatalf("Check = %v, want reason %s", err, tt.wantReason)
			}
			for _, w := range tt.want {
				if !strings.Contains(e.Message, w) {
					t.Errorf("message %q lacks %q", e.Message, w)
				}
			}
		})
	}
}
