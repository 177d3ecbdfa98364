package owner

import (
	"context"
	"crypto/hmac"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Whole returns the object held, read from the cache of NewCache, as
// complete as a read from the API server, for a comparison with want, its
// rendered counterpart. An object the cache holds whole is returned as it
// is. A ConfigMap or Secret whose data has the digest of want's data is
// returned with want's data, which is then its own. Any other, a
// ConfigMap or Secret changed since it was rendered or an object the cache
// holds the metadata of alone, is read from the API server with reader: the
// rare path. held may be the cache's own object (read with
// client.UnsafeDisableDeepCopy): it is never changed, and the object
// returned is a copy, or held itself.
func Whole(ctx context.Context, reader client.Reader, want *unstructured.Unstructured, held client.Object) (client.Object, error) {
	ann := held.GetAnnotations()
	d, digested := ann[AnnotationDataDigest]
	_, stub := ann[AnnotationMetadataOnly]
	if !digested && !stub {
		return held, nil
	}
	if digested && !stub {
		if wd, err := digestOf(want); err == nil && hmac.Equal([]byte(wd), []byte(d)) {
			obj := held.DeepCopyObject().(client.Object)
			if err := withData(obj, want); err != nil {
				return nil, err
			}
			a := obj.GetAnnotations() // obj's own copy

			delete(a, AnnotationDataDigest)
			obj.SetAnnotations(a)
			return obj, nil
		}
	}
	fresh := empty(held)
	if err := reader.Get(ctx, client.ObjectKeyFromObject(held), fresh); err != nil {
		return nil, err
	}
	return fresh, nil
}

// withData sets on obj, a ConfigMap or Secret without its data, the data of
// want, its rendered counterpart, whose digest it has.
func withData(obj client.Object, want *unstructured.Unstructured) error {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		for _, f := range []string{"data", "binaryData", "stringData"} {
			if v, ok := want.Object[f]; ok {
				u.Object[f] = runtime.DeepCopyJSONValue(v)
			}
		}
		return nil
	}
	fields, err := dataFields(want)
	if err != nil {
		return err
	}
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		if len(fields["data"]) > 0 {
			o.Data = make(map[string]string, len(fields["data"]))
			for k, v := range fields["data"] {
				o.Data[k] = string(v)
			}
		}
		if len(fields["binaryData"]) > 0 {
			o.BinaryData = fields["binaryData"]
		}
	case *corev1.Secret:
		if len(fields["data"]) > 0 {
			o.Data = fields["data"]
		}
	}
	return nil
}

// empty returns an empty object of obj's type and kind.
func empty(obj client.Object) client.Object {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		e := &unstructured.Unstructured{}
		e.SetGroupVersionKind(u.GroupVersionKind())
		return e
	}
	e := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
	e.GetObjectKind().SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	return e
}
