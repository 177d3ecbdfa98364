package compact

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Encoded is a custom resource as a cache holds it: its metadata as a Go
// type, for the informer's keys and indexes, label selectors, event handlers
// and predicates, and the whole object as deflated JSON. Unstructured, a
// WebApp with its status took 4.5 KB, a map and boxed values for every JSON
// object and field; encoded it takes about 1 KB.
//
// A read from the cache copies the object (DeepCopyObject), and the copy is
// the object decoded: an *unstructured.Unstructured, as the cache would have
// returned. Who reads the cache's own object without a copy (event handlers,
// predicates, indexers, a read with UnsafeDisableDeepCopy) gets the Encoded
// and its metadata, and Summary for what else it needs.
type Encoded struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Summary is what the cache's summarize function made of the object
	// (TransformEncoding): what predicates read of its spec or status,
	// computed once as the object entered the cache.
	Summary any

	data []byte // the object's JSON, deflated
}

// Encode returns u encoded; summarize, when not nil, gives its Summary.
func Encode(u *unstructured.Unstructured, summarize func(*unstructured.Unstructured) any) (*Encoded, error) {
	js, err := u.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	data, err := Deflate(js)
	if err != nil {
		return nil, fmt.Errorf("encoding %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	e := &Encoded{TypeMeta: metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()}, ObjectMeta: metaOf(u), data: data}
	if summarize != nil {
		e.Summary = summarize(u)
	}
	Share(e)
	return e, nil
}

// metaOf returns u's metadata as a Go type. Managed fields are not kept.
func metaOf(u *unstructured.Unstructured) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:                       u.GetName(),
		GenerateName:               u.GetGenerateName(),
		Namespace:                  u.GetNamespace(),
		UID:                        u.GetUID(),
		ResourceVersion:            u.GetResourceVersion(),
		Generation:                 u.GetGeneration(),
		CreationTimestamp:          u.GetCreationTimestamp(),
		DeletionTimestamp:          u.GetDeletionTimestamp(),
		DeletionGracePeriodSeconds: u.GetDeletionGracePeriodSeconds(),
		Labels:                     u.GetLabels(),
		Annotations:                u.GetAnnotations(),
		OwnerReferences:            u.GetOwnerReferences(),
		Finalizers:                 u.GetFinalizers(),
	}
}

// Decode returns the object e encodes, as the API server sent it to the
// cache (without its managed fields).
func (e *Encoded) Decode() (*unstructured.Unstructured, error) {
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

// DeepCopyObject returns the object decoded, for the cache's reads. What
// Encode wrote always decodes: a failure is a fault of this process's memory,
// and it panics (controller-runtime recovers a reconcile's panic).
func (e *Encoded) DeepCopyObject() runtime.Object {
	u, err := e.Decode()
	if err != nil {
		panic(err)
	}
	return u
}
