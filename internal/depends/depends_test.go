package depends_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rudder-operator/rudder/internal/depends"
)

var (
	webApp   = schema.GroupVersionKind{Group: "webapp.my.domain", Version: "v1", Kind: "WebApp"}
	database = schema.GroupVersionKind{Group: "database.my.domain", Version: "v1", Kind: "Database"}
	network  = schema.GroupVersionKind{Group: "samplecrd.k8s.io", Version: "v1", Kind: "Network"}
	kinds    = depends.Kinds{GVKs: []schema.GroupVersionKind{webApp, database, network}}
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

func TestKinds_Parse(t *testing.T) {
	crossNamespace := depends.Kinds{GVKs: kinds.GVKs, CrossNamespace: true}
	tests := []struct {
		name       string
		kinds      depends.Kinds
		value      string
		want       []string // Ref.Key of each
		wantReason depends.Reason
		wantErr    []string
	}{
		{name: "kind/name", value: "database/orders", want: []string{"Database.database.my.domain/shop/orders"}},
		{name: "spaces, case, empty entries, duplicates", value: " Database/orders , network/backend,,database/orders", want: []string{
			"Database.database.my.domain/shop/orders", "Network.samplecrd.k8s.io/shop/backend"}},
		{name: "its own namespace written out", value: "shop/database.database.my.domain/orders",
			want: []string{"Database.database.my.domain/shop/orders"}},
		{name: "another namespace, allowed", kinds: crossNamespace, value: "data/database.database.my.domain/orders",
			want: []string{"Database.database.my.domain/data/orders"}},
		{name: "another namespace, refused by default", value: "team-b/database/prod", wantReason: depends.ReasonCrossNamespace,
			wantErr: []string{`"team-b/database/prod" names another namespace; references stay in the resource's namespace ` +
				"unless the manager runs with --allow-cross-namespace-refs"}},
		{name: "another namespace among others", value: "database/orders, team-b/network/backend", wantReason: depends.ReasonCrossNamespace,
			wantErr: []string{`"team-b/network/backend" names another namespace`}},
		{name: "no kind", value: "orders", wantReason: depends.ReasonInvalid,
			wantErr: []string{`"orders" is not kind/name or namespace/kind/name`, "database/orders"}},
		{name: "unknown kind", value: "cache/redis", wantReason: depends.ReasonInvalid,
			wantErr: []string{`names kind "cache", which rudder does not serve`, "webapp, database, network"}},
		{name: "empty name", value: "database/", wantReason: depends.ReasonInvalid, wantErr: []string{"empty name"}},
		{name: "too many parts", value: "a/b/c/d", wantReason: depends.ReasonInvalid, wantErr: []string{"is not kind/name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := kinds
			if tt.kinds.GVKs != nil {
				k = tt.kinds
			}
			refs, err := k.Parse(resource(webApp, "shop", "", tt.value))
			if tt.wantErr != nil {
				e, ok := depends.IsError(err)
				if !ok || e.Reason != tt.wantReason {
					t.Fatalf("Parse(%q) = %v, %v; want an error of reason %s", tt.value, refs, err, tt.wantReason)
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

func TestKinds_Check(t *testing.T) {
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

// TestKinds_CheckCrossNamespace: a refused reference to another namespace
// reads nothing there, and says the same whether the resource it names
// exists, is Ready or not; allowed, it is read as any other.
func TestKinds_CheckCrossNamespace(t *testing.T) {
	other := func(ready string) *unstructured.Unstructured {
		db := resource(database, "prod", ready, "")
		db.SetNamespace("team-b")
		return db
	}
	self := resource(webApp, "shop", "", "team-b/database/prod")
	tests := []struct {
		name       string
		kinds      depends.Kinds
		objects    []client.Object
		wantReason depends.Reason
	}{
		{name: "refused: the other exists and is Ready", kinds: kinds, objects: []client.Object{other("True")},
			wantReason: depends.ReasonCrossNamespace},
		{name: "refused: the other exists and is not Ready", kinds: kinds, objects: []client.Object{other("False")},
			wantReason: depends.ReasonCrossNamespace},
		{name: "refused: the other does not exist", kinds: kinds, wantReason: depends.ReasonCrossNamespace},
		{name: "allowed: the other is not Ready", kinds: depends.Kinds{GVKs: kinds.GVKs, CrossNamespace: true},
			objects: []client.Object{other("False")}, wantReason: depends.ReasonNotReady},
		{name: "allowed: the other is Ready", kinds: depends.Kinds{GVKs: kinds.GVKs, CrossNamespace: true},
			objects: []client.Object{other("True")}},
	}
	const refused = `annotation rudder.dev/depends-on: "team-b/database/prod" names another namespace; ` +
		"references stay in the resource's namespace unless the manager runs with --allow-cross-namespace-refs"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reads := 0
			reader := interceptor.NewClient(fake.NewClientBuilder().WithObjects(tt.objects...).Build(), interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					reads++
					return c.Get(ctx, key, obj, opts...)
				},
			})
			err := tt.kinds.Check(context.Background(), reader, self, webApp)
			e, _ := depends.IsError(err)
			switch {
			case tt.wantReason == "" && err != nil:
				t.Fatalf("Check = %v, want nil", err)
			case tt.wantReason != "" && (e == nil || e.Reason != tt.wantReason):
				t.Fatalf("Check = %v, want reason %s", err, tt.wantReason)
			case tt.wantReason == depends.ReasonCrossNamespace && (e.Message != refused || reads != 0):
				t.Errorf("Check = %q after %d reads; want %q after none", e.Message, reads, refused)
			}
		})
	}
}
