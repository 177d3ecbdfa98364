package compact

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// decoded returns a fresh copy of obj, as a decoder would make it: no
// string shared with obj or with another copy.
func decoded[T any](t *testing.T, obj T) T {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameBytes(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func deployment(name string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "default",
			Labels:        map[string]string{"app.kubernetes.io/name": "webapp", "rudder.dev/release": "webapp-" + name},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "rudder", Operation: metav1.ManagedFieldsOperationApply}},
		},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "web", Image: "nginx:1.25", Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: "TCP"}}}},
		}}},
		Status: appsv1.DeploymentStatus{Conditions: []appsv1.DeploymentCondition{{Type: "Available", Status: "True", Reason: "MinimumReplicasAvailable"}}},
	}
}

func TestTransform_StripsManagedFieldsAndKeepsEveryValue(t *testing.T) {
	want := deployment("a")
	got := decoded(t, want)
	out, err := Transform()(got)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.(*appsv1.Deployment).ManagedFields) != 0 {
		t.Fatal("managed fields kept")
	}
	want.ManagedFields = nil
	if !equality.Semantic.DeepEqual(want, out) {
		t.Fatalf("values changed:\nwant %+v\ngot  %+v", want, out)
	}
}

func TestShare_TypedObjectsShareTheirShortStrings(t *testing.T) {
	a, b := decoded(t, deployment("a")), decoded(t, deployment("b"))
	Share(a)
	Share(b)
	ca, cb := a.Spec.Template.Spec.Containers[0], b.Spec.Template.Spec.Containers[0]
	for _, pair := range [][2]string{
		{ca.Image, cb.Image},
		{string(ca.Ports[0].Protocol), string(cb.Ports[0].Protocol)},
		{string(a.Status.Conditions[0].Status), string(b.Status.Conditions[0].Status)},
		{a.Labels["app.kubernetes.io/name"], b.Labels["app.kubernetes.io/name"]},
	} {
		if !sameBytes(pair[0], pair[1]) {
			t.Errorf("%q is held twice", pair[0])
		}
	}
	for k := range a.Labels {
		for k2 := range b.Labels {
			if k == k2 && !sameBytes(k, k2) {
				t.Errorf("label key %q is held twice", k)
			}
		}
	}
	if a.Labels["rudder.dev/release"] != "webapp-a" || b.Labels["rudder.dev/release"] != "webapp-b" {
		t.Errorf("labels changed: %v, %v", a.Labels, b.Labels)
	}
}

func TestShare_UnstructuredSharesKeysAndValues(t *testing.T) {
	obj := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(`{"apiVersion":"webapp.my.domain/v1","kind":"WebApp",
			"metadata":{"name":"a","namespace":"default","labels":{"tier":"web"}},
			"spec":{"image":"nginx:1.25","replicas":2,"ports":[{"protocol":"TCP"}]},
			"status":{"phase":"Running","message":"All replicas are ready, and this message is longer than sixty-four bytes"}}`)); err != nil {
			t.Fatal(err)
		}
		return u
	}
	a, b := obj(), obj()
	want := obj()
	Share(a)
	Share(b)
	if !equality.Semantic.DeepEqual(want.Object, a.Object) {
		t.Fatalf("values changed:\nwant %v\ngot  %v", want.Object, a.Object)
	}
	ia, _, _ := unstructured.NestedString(a.Object, "spec", "image")
	ib, _, _ := unstructured.NestedString(b.Object, "spec", "image")
	if !sameBytes(ia, ib) {
		t.Error("spec.image is held twice")
	}
	pa := a.Object["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["protocol"].(string)
	pb := b.Object["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["protocol"].(string)
	if !sameBytes(pa, pb) {
		t.Error("a string in a list is held twice")
	}
	ma, _, _ := unstructured.NestedString(a.Object, "status", "message")
	mb, _, _ := unstructured.NestedString(b.Object, "status", "message")
	if sameBytes(ma, mb) {
		t.Error("a string longer than maxShared is shared: it would fill the process's table with strings few objects hold")
	}
}

func TestShare_LeavesBytesAlone(t *testing.T) {
	s := &corev1.Secret{Data: map[string][]byte{"password": []byte("s3cret")}}
	Share(s)
	if string(s.Data["password"]) != "s3cret" {
		t.Fatal("a Secret's data changed")
	}
}

func TestShare_LeavesIdentitiesAlone(t *testing.T) {
	a, b := deployment("a"), deployment("b")
	a.UID, b.UID = "0b5c6a4e-1111-4a40-9d3e-5a1f0b2c3d4e", "0b5c6a4e-1111-4a40-9d3e-5a1f0b2c3d4e"
	a.ResourceVersion, b.ResourceVersion = "4711", "4711"
	a, b = decoded(t, a), decoded(t, b)
	// The decoder may already hand out one copy of equal short strings (Go
	// 1.27's does): what Share must do is leave each object's as it was.
	uid, rv := string(b.UID), b.ResourceVersion
	Share(a)
	Share(b)
	if !sameBytes(string(b.UID), uid) || !sameBytes(b.ResourceVersion, rv) {
		t.Error("a UID or resourceVersion was replaced by a shared copy: each object has its own, and a shared copy costs more")
	}
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"uid": string([]byte("x-1")), "resourceVersion": string([]byte("12"))}}}
	want := u.DeepCopy()
	Share(u)
	if !equality.Semantic.DeepEqual(want.Object, u.Object) {
		t.Fatalf("values changed: %v", u.Object)
	}
}

func TestFieldsOf_VisitsOnlyFieldsThatHoldStrings(t *testing.T) {
	type tree struct {
		Name     string
		Count    int
		Data     []byte
		Children []*tree // recursive: must not loop
		Labels   map[string]string
		Weights  map[string]int
		UID      string // unshared
		hidden   string
	}
	_ = tree{}.hidden
	got := fieldsOf(reflect.TypeOf(tree{}))
	want := []int{0, 3, 4} // Name, Children, Labels
	if !slices.Equal(got, want) {
		t.Fatalf("fields %v, want %v", got, want)
	}
	x := &tree{Name: string([]byte("web")), Children: []*tree{{Name: string([]byte("web"))}}}
	Share(x)
	if !sameBytes(x.Name, x.Children[0].Name) {
		t.Error("a string under a recursive field is held twice")
	}
}
