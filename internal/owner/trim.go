package owner

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Annotations that the cache of the releases' objects sets on the objects it
// holds, in memory only. The API server never stores them: any an object
// carries there is removed as it enters the cache, so that nobody can forge
// one, and no object read from the cache is written back whole (drift repair
// sends a patch made of the rendered object).
const (
	// AnnotationDataDigest holds a keyed digest of the data the cache
	// dropped from a ConfigMap or a Secret (data, binaryData, stringData),
	// so that a reader compares the rendered data with it (Whole) without
	// the cache holding any of it.
	AnnotationDataDigest = "cache.rudder.dev/data-digest"
	// AnnotationMetadataOnly marks an object of which the cache holds
	// only the metadata: it carries LabelRelease but no owner reference
	// or Annotation naming a kind rudder serves.
	AnnotationMetadataOnly = "cache.rudder.dev/metadata-only"
)

// digestKey keys the data digests of this process, so that a digest of a
// Secret's value, held in memory, tells nothing of the value to whoever
// reads it (a heap dump): it can be compared only with what this process
// digests.
var digestKey = newDigestKey()

func newDigestKey() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // never fails (crypto/rand)
	return k
}

// trim returns what the cache of the releases' objects keeps of obj, which
// it may change: an object not owned by a resource of a kind in owners
// (owned) as its metadata alone (AnnotationMetadataOnly); a ConfigMap or
// Secret without its data (AnnotationDataDigest). The last-applied
// annotation, which kubectl apply fills with a copy of the object, is never
// kept: no reader reads it. trim is idempotent, as client-go asks of a
// transform: an informer may hand it what it returned.
func trim(obj client.Object, owned func(client.Object) bool) client.Object {
	ann := obj.GetAnnotations() // a copy, for an unstructured object
	digest, digested := ann[AnnotationDataDigest]
	for _, k := range []string{corev1.LastAppliedConfigAnnotation, AnnotationDataDigest, AnnotationMetadataOnly} {
		delete(ann, k)
	}
	if ann != nil {
		obj.SetAnnotations(ann)
	}
	if !owned(obj) {
		return stubOf(obj)
	}
	if !holdsData(obj) {
		return obj
	}
	if digested && !hasData(obj) {
		// Trimmed already. A digest forged on the API server matches no
		// rendered data (it is keyed): Whole then reads the object there.
		setAnnotation(obj, AnnotationDataDigest, digest)
		return obj
	}
	d, err := digestOf(obj)
	if err != nil {
		return stubOf(obj) // data the API server would not store: read it there
	}
	dropData(obj)
	setAnnotation(obj, AnnotationDataDigest, d)
	return obj
}

// stubOf returns obj's metadata, marked AnnotationMetadataOnly.
func stubOf(obj client.Object) client.Object {
	stub := metadataOnly(obj)
	setAnnotation(stub, AnnotationMetadataOnly, "true")
	return stub
}

// ownedBy returns whether an object is owned, by owner reference or by the
// Annotation, by a resource of one of kinds.
func ownedBy(kinds []schema.GroupKind) func(client.Object) bool {
	set := make(map[schema.GroupKind]bool, len(kinds))
	for _, gk := range kinds {
		set[gk] = true
	}
	return func(obj client.Object) bool {
		for _, ref := range obj.GetOwnerReferences() {
			if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil && set[schema.GroupKind{Group: gv.Group, Kind: ref.Kind}] {
				return true
			}
		}
		v, ok := obj.GetAnnotations()[Annotation]
		if !ok {
			return false
		}
		kind, rest, _ := strings.Cut(v, ".")
		group, _, _ := strings.Cut(rest, "/")
		return set[schema.GroupKind{Group: group, Kind: kind}]
	}
}

// metadataOnly returns an object of obj's type holding obj's kind and
// metadata, and nothing else.
func metadataOnly(obj client.Object) client.Object {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		stub := &unstructured.Unstructured{Object: map[string]any{}}
		for _, k := range []string{"apiVersion", "kind", "metadata"} {
			if v, ok := u.Object[k]; ok {
				stub.Object[k] = v
			}
		}
		return stub
	}
	v := reflect.ValueOf(obj).Elem()
	stub := reflect.New(v.Type())
	for _, f := range []string{"TypeMeta", "ObjectMeta"} {
		if fv := v.FieldByName(f); fv.IsValid() {
			stub.Elem().FieldByName(f).Set(fv)
		}
	}
	return stub.Interface().(client.Object)
}

func setAnnotation(obj client.Object, k, v string) {
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[k] = v
	obj.SetAnnotations(ann)
}

// holdsData reports whether obj is a ConfigMap or a Secret.
func holdsData(obj client.Object) bool {
	switch o := obj.(type) {
	case *corev1.ConfigMap, *corev1.Secret:
		return true
	case *unstructured.Unstructured:
		gvk := o.GroupVersionKind()
		return gvk.Group == "" && gvk.Version == "v1" && (gvk.Kind == "ConfigMap" || gvk.Kind == "Secret")
	}
	return false
}

// hasData reports whether a ConfigMap or a Secret holds data.
func hasData(obj client.Object) bool {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		return len(o.Data)+len(o.BinaryData) > 0
	case *corev1.Secret:
		return len(o.Data)+len(o.StringData) > 0
	case *unstructured.Unstructured:
		for _, f := range []string{"data", "binaryData", "stringData"} {
			if _, ok := o.Object[f]; ok {
				return true
			}
		}
	}
	return false
}

func dropData(obj client.Object) {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		o.Data, o.BinaryData = nil, nil
	case *corev1.Secret:
		o.Data, o.StringData = nil, nil
	case *unstructured.Unstructured:
		for _, f := range []string{"data", "binaryData", "stringData"} {
			delete(o.Object, f)
		}
	}
}

// dataFields returns the data of a ConfigMap or a Secret as the API server
// stores it: field ("data", "binaryData") → key → bytes. A Secret's
// stringData is merged into its data, over it, as the API server does; a
// rendered value that does not decode is an error.
func dataFields(obj client.Object) (map[string]map[string][]byte, error) {
	out := map[string]map[string][]byte{}
	add := func(field, key string, v []byte) {
		if out[field] == nil {
			out[field] = map[string][]byte{}
		}
		out[field][key] = v
	}
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		for k, v := range o.Data {
			add("data", k, []byte(v))
		}
		for k, v := range o.BinaryData {
			add("binaryData", k, v)
		}
	case *corev1.Secret:
		for k, v := range o.Data {
			add("data", k, v)
		}
		for k, v := range o.StringData {
			add("data", k, []byte(v))
		}
	case *unstructured.Unstructured:
		secret := o.GetKind() == "Secret"
		for _, f := range []string{"data", "binaryData", "stringData"} {
			m, ok := o.Object[f].(map[string]any)
			if !ok {
				if o.Object[f] != nil {
					return nil, fmt.Errorf("%s of %s %s is not a map", f, o.GetKind(), o.GetName())
				}
				continue
			}
			field := f
			if f == "stringData" {
				field = "data"
			}
			for k, v := range m {
				s, ok := v.(string)
				if !ok && v != nil {
					return nil, fmt.Errorf("%s.%s of %s %s is not a string", f, k, o.GetKind(), o.GetName())
				}
				b := []byte(s)
				if f == "binaryData" || f == "data" && secret {
					var err error
					if b, err = base64.StdEncoding.DecodeString(s); err != nil {
						return nil, fmt.Errorf("%s.%s of %s %s is not base64: %w", f, k, o.GetKind(), o.GetName(), err)
					}
				}
				add(field, k, b)
			}
		}
	}
	return out, nil
}

// digestOf returns the keyed digest of the data of a ConfigMap or a Secret,
// equal for two objects whose data the API server stores alike, whether
// they are rendered (unstructured) or read (a Go type).
func digestOf(obj client.Object) (string, error) {
	fields, err := dataFields(obj)
	if err != nil {
		return "", err
	}
	h := hmac.New(sha256.New, digestKey)
	for _, f := range sortedKeys(fields) {
		if len(fields[f]) == 0 {
			continue
		}
		write(h, []byte(f))
		for _, k := range sortedKeys(fields[f]) {
			write(h, []byte(k))
			write(h, fields[f][k])
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// write writes b length-prefixed, so that no two sequences of fields write
// the same bytes.
func write(h hash.Hash, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
