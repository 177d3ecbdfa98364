package compact

import (
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Encoded is an object as a cache holds it: its metadata as a Go type, for
// the informer's keys and indexes, label selectors, event handlers and
// predicates, and the rest encoded. Unstructured, a WebApp with its status
// took 4.5 KB, a map and a boxed value for every JSON object and field; a
// Deployment as its Go type 4.6 KB, most of it the pod template's structs.
// Encoded, they take about 1.1 KB and 1.9 KB.
//
// A read from the cache copies the object (DeepCopyObject), and the copy is
// the object decoded, of the type the cache would have returned. Who reads
// the cache's own object without a copy (event handlers, predicates,
// indexers) gets the Encoded: its metadata, and Summary for what else it
// needs.
type Encoded struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Summary is what the cache's summarize function made of the object
	// (TransformEncoding): what predicates read of its spec or status,
	// computed once as the object entered the cache.
	Summary any

	typ reflect.Type // a Go type's; nil for an unstructured object

	// data is an unstructured object's JSON, whole and deflated (a WebApp's
	// 1,260 bytes to 585), or a Go type's protobuf without its metadata,
	// left as it is: a Deployment's 840 bytes deflate to 566, for 25 µs
	// at each of its status updates.
	data []byte
}

// protobuf is what the API's Go types implement.
type protobuf interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// Encode returns obj encoded, an unstructured object or a pointer to an API
// Go type; summarize, when not nil, gives its Summary.
func Encode(obj client.Object, summarize func(client.Object) any) (*Encoded, error) {
	apiVersion, kind := obj.GetObjectKind().GroupVersionKind().ToAPIVersionAndKind()
	e := &Encoded{TypeMeta: metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}, ObjectMeta: metaOf(obj)}
	var err error
	if u, ok := obj.(*unstructured.Unstructured); ok {
		var js []byte
		if js, err = u.MarshalJSON(); err == nil {
			e.data, err = Deflate(js)
		}
	} else {
		e.typ = reflect.TypeOf(obj).Elem()
		e.data, err = withoutMeta(obj)
	}
	if err != nil {
		return nil, fmt.Errorf("encoding %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
	}
	if summarize != nil {
		e.Summary = summarize(obj)
	}
	Share(e)
	return e, nil
}

// withoutMeta returns the protobuf of a Go-typed object, its metadata left
// out.
func withoutMeta(obj client.Object) ([]byte, error) {
	c := reflect.New(reflect.TypeOf(obj).Elem())
	c.Elem().Set(reflect.ValueOf(obj).Elem())
	meta := c.Elem().FieldByName("ObjectMeta")
	if !meta.IsValid() {
		return nil, fmt.Errorf("%T has no ObjectMeta", obj)
	}
	meta.Set(reflect.Zero(meta.Type()))
	pb, ok := c.Interface().(protobuf)
	if !ok {
		return nil, fmt.Errorf("%T has no protobuf encoding", obj)
	}
	return pb.Marshal()
}

// Encodable reports whether Encode takes obj: an unstructured object, or a
// pointer to an API Go type with its metadata and a protobuf encoding.
func Encodable(obj client.Object) bool {
	if _, ok := obj.(*unstructured.Unstructured); ok {
		return true
	}
	if _, ok := obj.(protobuf); !ok {
		return false
	}
	t := reflect.TypeOf(obj)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return false
	}
	f, ok := t.Elem().FieldByName("ObjectMeta")
	return ok && f.Type == reflect.TypeFor[metav1.ObjectMeta]()
}

// OfKinds returns an encodes function for TransformEncoding: unstructured
// objects of kinds.
func OfKinds(kinds map[schema.GroupVersionKind]bool) func(client.Object) bool {
	return func(obj client.Object) bool {
		u, ok := obj.(*unstructured.Unstructured)
		return ok && kinds[u.GroupVersionKind()]
	}
}

// metaOf returns obj's metadata as a Go type. Managed fields are not kept.
func metaOf(obj metav1.Object) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:                       obj.GetName(),
		GenerateName:               obj.GetGenerateName(),
		Namespace:                  obj.GetNamespace(),
		UID:                        obj.GetUID(),
		ResourceVersion:            obj.GetResourceVersion(),
		Generation:                 obj.GetGeneration(),
		CreationTimestamp:          obj.GetCreationTimestamp(),
		DeletionTimestamp:          obj.GetDeletionTimestamp(),
		DeletionGracePeriodSeconds: obj.GetDeletionGracePeriodSeconds(),
		Labels:                     obj.GetLabels(),
		Annotations:                obj.GetAnnotations(),
		OwnerReferences:            obj.GetOwnerReferences(),
		Finalizers:                 obj.GetFinalizers(),
	}
}

// Decode returns the object e encodes as the API server sent it to the cache
// (without its managed fields): an *unstructured.Unstructured, or a pointer
// to its Go type.
func (e *Encoded) Decode() (client.Object, error) {
	if e.typ == nil {
		js, err := Inflate(e.data)
		if err != nil {
			return nil, fmt.Errorf("decoding %s %s/%s: %w", e.Kind, e.Namespace, e.Name, err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, fmt.Errorf("decoding %s %s/%s: %w", e.Kind, e.Namespace, e.Name, err)
		}
		return u, nil
	}
	p := reflect.New(e.typ)
	if err := p.Interface().(protobuf).Unmarshal(e.data); err != nil {
		return nil, fmt.Errorf("decoding %s %s/%s: %w", e.typ.Name(), e.Namespace, e.Name, err)
	}
	meta := e.ObjectMeta // deep-copied: no reader shares the cache's maps
	p.Elem().FieldByName("ObjectMeta").Set(reflect.ValueOf(*meta.DeepCopy()))
	obj := p.Interface().(client.Object)
	obj.GetObjectKind().SetGroupVersionKind(e.GroupVersionKind())
	return obj, nil
}

// Decoded returns obj decoded when it is Encoded, else obj itself.
func Decoded(obj client.Object) (client.Object, error) {
	if e, ok := obj.(*Encoded); ok {
		return e.Decode()
	}
	return obj, nil
}

// DeepCopyObject returns the object decoded, for the cache's reads. What
// Encode wrote always decodes: a failure is a fault of this process's memory,
// and it panics (controller-runtime recovers a reconcile's panic).
func (e *Encoded) DeepCopyObject() runtime.Object {
	obj, err := e.Decode()
	if err != nil {
		panic(err)
	}
	return obj
}
