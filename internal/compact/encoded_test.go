package compact

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var webAppKind = schema.GroupVersionKind{Group: "webapp.my.domain", Version: "v1", Kind: "WebApp"}

// webApp is a WebApp as the API server sends it to the cache.
func webApp(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	err := u.UnmarshalJSON([]byte(`{"apiVersion":"webapp.my.domain/v1","kind":"WebApp",
	"metadata":{"name":"my-webapp","namespace":"default","uid":"4a61861c-496d-40de-bcbe-c73a54203953",
	  "resourceVersion":"559","generation":2,"creationTimestamp":"2026-12-04T14:24:00Z",
	  "labels":{"team":"web"},"annotations":{"rudder.dev/depends-on":"Database/db"},
	  "finalizers":["rudder.dev/release"],
	  "managedFields":[{"manager":"kubectl","operation":"Update","apiVersion":"webapp.my.domain/v1"}]},
	"spec":{"image":"nginx:1.25","replicas":3,"port":80,"cpu":0.5,"config":{"LOG_LEVEL":"info"},"tls":null},
	"status":{"observedGeneration":2,"phase":"Running","readyReplicas":3,
	  "conditions":[{"type":"Ready","status":"True","reason":"Ready","message":"All replicas are ready",
	    "lastTransitionTime":"2026-12-04T14:24:01Z","observedGeneration":2}],
	  "history":[{"revision":1,"status":"deployed","chart":"webapp"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestTransformEncoding_KeepsAWatchedKindEncodedAndReadsItBackWhole(t *testing.T) {
	in := webApp(t)
	want := in.DeepCopy()
	want.SetManagedFields(nil)
	summary := func(obj client.Object) any { return obj.GetGeneration() * 10 }

	out, err := TransformEncoding(OfKinds(map[schema.GroupVersionKind]bool{webAppKind: true}), summary)(in)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := out.(*Encoded)
	if !ok {
		t.Fatalf("transform made a %T, want *Encoded", out)
	}
	// What handlers, predicates and indexers read without a copy.
	var obj client.Object = e
	if obj.GetName() != "my-webapp" || obj.GetNamespace() != "default" || obj.GetResourceVersion() != "559" ||
		obj.GetGeneration() != 2 || obj.GetLabels()["team"] != "web" ||
		obj.GetAnnotations()["rudder.dev/depends-on"] != "Database/db" ||
		len(obj.GetFinalizers()) != 1 || obj.GetUID() != want.GetUID() ||
		!obj.GetCreationTimestamp().Time.Equal(want.GetCreationTimestamp().Time) {
		t.Errorf("metadata not kept: %+v", e.ObjectMeta)
	}
	if len(e.ManagedFields) != 0 {
		t.Error("managed fields kept")
	}
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk != webAppKind {
		t.Errorf("kind %v, want %v", gvk, webAppKind)
	}
	if e.Summary != int64(20) {
		t.Errorf("summary %v, want 20", e.Summary)
	}

	// What a read from the cache gets: the object as it came, decoded anew
	// each time, so that a reader's change stays its own.
	got, ok := e.DeepCopyObject().(*unstructured.Unstructured)
	if !ok {
		t.Fatalf("a copy is a %T, want *unstructured.Unstructured", e.DeepCopyObject())
	}
	if !equality.Semantic.DeepEqual(want.Object, got.Object) {
		t.Fatalf("decoded object differs:\nwant %v\ngot  %v", want.Object, got.Object)
	}
	if _, isInt := got.Object["spec"].(map[string]any)["replicas"].(int64); !isInt {
		t.Error("an integer came back as another type")
	}
	got.Object["spec"].(map[string]any)["image"] = "changed"
	again := e.DeepCopyObject().(*unstructured.Unstructured)
	if img, _, _ := unstructured.NestedString(again.Object, "spec", "image"); img != "nginx:1.25" {
		t.Errorf("a change to one copy reached the next: image %q", img)
	}
	if js := mustJSON(t, want); len(e.data) >= len(js) {
		t.Errorf("kept %d bytes for %d of JSON: not deflated", len(e.data), len(js))
	}
}

func TestTransformEncoding_LeavesOtherKindsUnstructured(t *testing.T) {
	in := webApp(t)
	in.SetKind("Database")
	out, err := TransformEncoding(OfKinds(map[schema.GroupVersionKind]bool{webAppKind: true}), nil)(in)
	if err != nil {
		t.Fatal(err)
	}
	u, ok := out.(*unstructured.Unstructured)
	if !ok {
		t.Fatalf("transform made a %T, want the unstructured object", out)
	}
	if len(u.GetManagedFields()) != 0 {
		t.Error("managed fields kept")
	}
}

func TestEncode_KeepsAGoTypedObjectAndReadsItBackWhole(t *testing.T) {
	want := deployment("web")
	want.ResourceVersion, want.Generation = "7", 3
	in := decoded(t, want)
	want.ManagedFields = nil

	out, err := TransformEncoding(Encodable, nil)(in)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := out.(*Encoded)
	if !ok {
		t.Fatalf("transform made a %T, want *Encoded", out)
	}
	if e.Generation != 3 || e.ResourceVersion != "7" || e.Labels["rudder.dev/release"] != "webapp-web" || len(e.ManagedFields) != 0 {
		t.Errorf("metadata not kept: %+v", e.ObjectMeta)
	}
	got, ok := e.DeepCopyObject().(*appsv1.Deployment)
	if !ok {
		t.Fatalf("a copy is a %T, want *appsv1.Deployment", e.DeepCopyObject())
	}
	got.TypeMeta = metav1.TypeMeta{} // as the cache's reads set it
	if !equality.Semantic.DeepEqual(want, got) {
		t.Fatalf("decoded object differs:\nwant %+v\ngot  %+v", want, got)
	}
	got.Labels["rudder.dev/release"] = "changed"
	if e.Labels["rudder.dev/release"] != "webapp-web" {
		t.Error("a change to a copy's labels reached the cache's object")
	}
}

func TestEncodable(t *testing.T) {
	for _, tt := range []struct {
		obj  client.Object
		want bool
	}{
		{&unstructured.Unstructured{}, true},
		{&appsv1.Deployment{}, true},
		{&corev1.Service{}, true},
		{&metav1.PartialObjectMetadata{}, true},
		{&Encoded{}, false},
	} {
		if got := Encodable(tt.obj); got != tt.want {
			t.Errorf("Encodable(%T) = %v, want %v", tt.obj, got, tt.want)
		}
	}
}

func TestDecode_RefusesWhatIsNotDeflated(t *testing.T) {
	e := &Encoded{data: []byte(`{"kind":"WebApp"}`)}
	if _, err := e.Decode(); err == nil {
		t.Fatal("decoded plain JSON as deflated")
	}
}

func mustJSON(t *testing.T, u *unstructured.Unstructured) []byte {
	t.Helper()
	js, err := u.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// The cost of keeping objects encoded: every version a cache receives is
// encoded, and every read that copies one decodes it.
func BenchmarkEncoded(b *testing.B) {
	d := deployment("web")
	d.ManagedFields = nil
	u := webApp(&testing.T{})
	u.SetManagedFields(nil)
	for _, obj := range []client.Object{d, u} {
		name := obj.GetObjectKind().GroupVersionKind().Kind
		if name == "" {
			name = "Deployment"
		}
		b.Run("Encode/"+name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Encode(obj, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		e, err := Encode(obj, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("Decode/"+name, func(b *testing.B) {
			for b.Loop() {
				if _, err := e.Decode(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("DeepCopy/"+name, func(b *testing.B) {
			for b.Loop() {
				obj.DeepCopyObject()
			}
		})
	}
}
