package owner

import (
	"bytes"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rudder-operator/rudder/internal/helm"
)

var webapp = schema.GroupKind{Group: "webapp.my.domain", Kind: "WebApp"}

func owner() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("webapp.my.domain/v1")
	u.SetKind("WebApp")
	u.SetNamespace("shop")
	u.SetName("front")
	u.SetUID("uid-1")
	return u
}

func mapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, meta.RESTScopeRoot)
	return m
}

func TestPostRenderer_RunRefusesWhatLiesOutsideItsScope(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		want     error
	}{
		{name: "another namespace", want: helm.ErrOutsideNamespace, manifest: `
apiVersion: v1
kind: ConfigMap
metadata: {name: elsewhere, namespace: team-b}`},
		{name: "a cluster-scoped kind the watch does not list", want: helm.ErrClusterScopedNotAllowed, manifest: `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: cluster-wide}`},
		{name: "a kind the cluster does not know, as cluster-scoped", want: helm.ErrClusterScopedNotAllowed, manifest: `
apiVersion: example.io/v1
kind: Unknown
metadata: {name: unknown}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\n---" + tt.manifest
			_, err := PostRenderer{Owner: owner(), Release: "webapp-front", Mapper: mapper(), Scope: helm.Scope{Namespace: "shop"}}.Run(bytes.NewBufferString(in))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Run: %v, want %v", err, tt.want)
			}
		})
	}
}

func TestPostRenderer_Run(t *testing.T) {
	in := `
apiVersion: v1
kind: ConfigMap
metadata:
  name: same-namespace
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: same-namespace-named
  namespace: shop
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: cluster-wide
---
apiVersion: example.io/v1
kind: Unknown
metadata:
  name: unknown-kind
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: kept
  annotations:
    helm.sh/resource-policy: keep
`
	scope := helm.Scope{Namespace: "shop", ClusterScoped: []schema.GroupKind{
		{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}, {Group: "example.io", Kind: "Unknown"},
	}}
	out, err := PostRenderer{Owner: owner(), Release: "webapp-front", Mapper: mapper(), Scope: scope}.Run(bytes.NewBufferString(in))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := helm.ParseManifest(out.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 5 {
		t.Fatalf("got %d objects, want 5", len(objs))
	}
	tests := []struct {
		name      string
		obj       *unstructured.Unstructured
		wantRef   bool
		wantAnnot bool
	}{
		{name: "namespaced, same namespace: owner reference", obj: objs[0], wantRef: true},
		{name: "namespaced, its namespace named: owner reference", obj: objs[1], wantRef: true},
		{name: "cluster-scoped: annotation", obj: objs[2], wantAnnot: true},
		{name: "unknown kind: annotation", obj: objs[3], wantAnnot: true},
		{name: "kept by the chart: annotation, so no garbage collection", obj: objs[4], wantAnnot: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refs := tt.obj.GetOwnerReferences()
			if hasRef := len(refs) == 1 && refs[0].UID == "uid-1" && *refs[0].Controller; hasRef != tt.wantRef {
				t.Errorf("owner references %v, want one: %v", refs, tt.wantRef)
			}
			if got := tt.obj.GetLabels()[LabelRelease]; got != "webapp-front" {
				t.Errorf("label %s = %q, want webapp-front: the dependents cache selects on it", LabelRelease, got)
			}
			_, hasAnnot := tt.obj.GetAnnotations()[Annotation]
			if hasAnnot != tt.wantAnnot {
				t.Errorf("annotation present %v, want %v", hasAnnot, tt.wantAnnot)
			}
			live := tt.obj.DeepCopy()
			if live.GetNamespace() == "" {
				live.SetNamespace("shop") // Helm applies it in the release's namespace
			}
			key, ok := Of(live, webapp)
			if want := (types.NamespacedName{Namespace: "shop", Name: "front"}); tt.wantRef && (!ok || key != want) {
				t.Errorf("Of = %v, %v; want %v", key, ok, want)
			}
		})
	}
}

func TestWithOwner(t *testing.T) {
	yes := true
	ref := metav1.OwnerReference{UID: "uid-1", Name: "front", Controller: &yes}
	other := metav1.OwnerReference{UID: "other", Name: "x", Controller: &yes}
	tests := []struct {
		name           string
		refs           []metav1.OwnerReference
		wantLen        int
		wantController bool
	}{
		{name: "no references", wantLen: 1, wantController: true},
		{name: "our reference replaced", refs: []metav1.OwnerReference{ref}, wantLen: 1, wantController: true},
		{name: "another controller kept", refs: []metav1.OwnerReference{other}, wantLen: 2, wantController: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := withOwner(tt.refs, ref)
			if len(got) != tt.wantLen {
				t.Fatalf("len = %d, want %d", len(got), tt.wantLen)
			}
			if c := *got[len(got)-1].Controller; c != tt.wantController {
				t.Errorf("our reference controller = %v, want %v", c, tt.wantController)
			}
		})
	}
}

func TestOf(t *testing.T) {
	obj := func(refs []metav1.OwnerReference, annot string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetNamespace("shop")
		u.SetOwnerReferences(refs)
		if annot != "" {
			u.SetAnnotations(map[string]string{Annotation: annot})
		}
		return u
	}
	tests := []struct {
		name   string
		obj    *unstructured.Unstructured
		want   types.NamespacedName
		wantOK bool
	}{
		{name: "owner reference", obj: obj([]metav1.OwnerReference{{APIVersion: "webapp.my.domain/v1", Kind: "WebApp", Name: "front"}}, ""),
			want: types.NamespacedName{Namespace: "shop", Name: "front"}, wantOK: true},
		{name: "owner of another kind", obj: obj([]metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs"}}, "")},
		{name: "same kind, other group", obj: obj([]metav1.OwnerReference{{APIVersion: "other.io/v1", Kind: "WebApp", Name: "front"}}, "")},
		{name: "annotation", obj: obj(nil, "WebApp.webapp.my.domain/ns2/back"), want: types.NamespacedName{Namespace: "ns2", Name: "back"}, wantOK: true},
		{name: "annotation of another kind", obj: obj(nil, "Database.database.my.domain/ns2/back")},
		{name: "malformed annotation", obj: obj(nil, "WebApp.webapp.my.domain/only-namespace")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Of(tt.obj, webapp)
			if ok != tt.wantOK || got != tt.want {
				t.Errorf("Of = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
