package owner

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func rendered(kind string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind,
		"metadata": map[string]any{"name": "x", "namespace": "shop"}}}
	for k, v := range fields {
		u.Object[k] = v
	}
	return u
}

func TestDigestOf(t *testing.T) {
	cm := &corev1.ConfigMap{Data: map[string]string{"a": "1", "b": "two"}, BinaryData: map[string][]byte{"bin": {0, 1}}}
	secret := &corev1.Secret{Data: map[string][]byte{"user": []byte("app"), "password": []byte("hunter2")}}
	tests := []struct {
		name      string
		live      client.Object
		want      *unstructured.Unstructured
		wantEqual bool
	}{
		{name: "ConfigMap as rendered", live: cm, wantEqual: true,
			want: rendered("ConfigMap", map[string]any{"data": map[string]any{"b": "two", "a": "1"}, "binaryData": map[string]any{"bin": "AAE="}})},
		{name: "ConfigMap value edited", live: cm,
			want: rendered("ConfigMap", map[string]any{"data": map[string]any{"b": "two", "a": "2"}, "binaryData": map[string]any{"bin": "AAE="}})},
		{name: "ConfigMap key moved from binaryData to data", live: cm,
			want: rendered("ConfigMap", map[string]any{"data": map[string]any{"b": "two", "a": "1", "bin": "\x00\x01"}})},
		{name: "ConfigMap with a key more live", live: cm,
			want: rendered("ConfigMap", map[string]any{"data": map[string]any{"a": "1"}, "binaryData": map[string]any{"bin": "AAE="}})},
		{name: "Secret as rendered with data", live: secret, wantEqual: true,
			want: rendered("Secret", map[string]any{"data": map[string]any{"user": "YXBw", "password": "aHVudGVyMg=="}})},
		{name: "Secret as rendered with stringData", live: secret, wantEqual: true,
			want: rendered("Secret", map[string]any{"stringData": map[string]any{"user": "app", "password": "hunter2"}})},
		{name: "Secret's stringData over its data", live: secret, wantEqual: true,
			want: rendered("Secret", map[string]any{"data": map[string]any{"user": "b3RoZXI=", "password": "aHVudGVyMg=="},
				"stringData": map[string]any{"user": "app"}})},
		{name: "Secret value edited", live: secret,
			want: rendered("Secret", map[string]any{"stringData": map[string]any{"user": "app", "password": "hunter3"}})},
		{name: "empty and missing data alike", live: &corev1.ConfigMap{}, wantEqual: true,
			want: rendered("ConfigMap", map[string]any{"data": map[string]any{}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := digestOf(tt.live)
			if err != nil {
				t.Fatal(err)
			}
			want, err := digestOf(tt.want)
			if err != nil {
				t.Fatal(err)
			}
			if (got == want) != tt.wantEqual {
				t.Errorf("digests equal = %v, want %v", got == want, tt.wantEqual)
			}
		})
	}
	if _, err := digestOf(rendered("Secret", map[string]any{"data": map[string]any{"k": "not base64!"}})); err == nil {
		t.Error("a Secret's data that is not base64 digested, want an error")
	}
}

func TestTrim(t *testing.T) {
	owned := ownedBy([]schema.GroupKind{{Group: "webapp.my.domain", Kind: "WebApp"}})
	ref := []metav1.OwnerReference{{APIVersion: "webapp.my.domain/v1", Kind: "WebApp", Name: "front", UID: "uid-1"}}
	forged := map[string]string{
		corev1.LastAppliedConfigAnnotation: `{"data":{"big":"..."}}`,
		AnnotationDataDigest:               "forged",
		AnnotationMetadataOnly:             "forged",
		"kept":                             "yes",
	}
	meta := func(refs []metav1.OwnerReference, ann map[string]string) metav1.ObjectMeta {
		a := map[string]string{}
		for k, v := range ann {
			a[k] = v
		}
		return metav1.ObjectMeta{Name: "x", Namespace: "shop", OwnerReferences: refs, Annotations: a}
	}
	tests := []struct {
		name         string
		obj          client.Object
		wantDigest   bool
		wantStub     bool
		wantSpecKept bool
	}{
		{name: "owned ConfigMap: data dropped, digest kept", obj: &corev1.ConfigMap{ObjectMeta: meta(ref, forged), Data: map[string]string{"a": "1"}},
			wantDigest: true},
		{name: "owned Secret: data dropped, digest kept", obj: &corev1.Secret{ObjectMeta: meta(ref, forged), Data: map[string][]byte{"a": []byte("1")}},
			wantDigest: true},
		{name: "ConfigMap not owned: metadata only", obj: &corev1.ConfigMap{ObjectMeta: meta(nil, forged), Data: map[string]string{"a": "1"}},
			wantStub: true},
		{name: "ConfigMap owned by another kind: metadata only",
			obj:      &corev1.ConfigMap{ObjectMeta: meta([]metav1.OwnerReference{{APIVersion: "other.io/v1", Kind: "WebApp"}}, nil)},
			wantStub: true},
		{name: "owned by annotation: kept", obj: &corev1.Service{ObjectMeta: meta(nil, map[string]string{Annotation: "WebApp.webapp.my.domain/shop/front"}),
			Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.1"}}, wantSpecKept: true},
		{name: "owned Service: kept", obj: &corev1.Service{ObjectMeta: meta(ref, forged), Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.1"}},
			wantSpecKept: true},
		{name: "Service not owned: metadata only", obj: &corev1.Service{ObjectMeta: meta(nil, forged), Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.1"}},
			wantStub: true},
		{name: "unstructured ConfigMap owned: data dropped", obj: func() client.Object {
			u := rendered("ConfigMap", map[string]any{"data": map[string]any{"a": "1"}})
			u.SetOwnerReferences(ref)
			return u
		}(), wantDigest: true},
		{name: "unstructured object not owned: metadata only", obj: rendered("ConfigMap", map[string]any{"data": map[string]any{"a": "1"}}),
			wantStub: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := trim(tt.obj, owned)
			if again := trim(got.DeepCopyObject().(client.Object), owned); !reflect.DeepEqual(again, got) {
				t.Errorf("trimmed again: %v, want it as it was: %v", again, got)
			}
			ann := got.GetAnnotations()
			if _, ok := ann[corev1.LastAppliedConfigAnnotation]; ok {
				t.Error("last-applied annotation kept")
			}
			if d, ok := ann[AnnotationDataDigest]; ok != tt.wantDigest || d == "forged" {
				t.Errorf("digest annotation %q (present %v), want present %v and not the forged one", d, ok, tt.wantDigest)
			}
			if _, ok := ann[AnnotationMetadataOnly]; ok != tt.wantStub || ann[AnnotationMetadataOnly] == "forged" {
				t.Errorf("metadata-only annotation %q, want present %v", ann[AnnotationMetadataOnly], tt.wantStub)
			}
			if got.GetName() != "x" || got.GetNamespace() != "shop" {
				t.Errorf("metadata lost: %s/%s", got.GetNamespace(), got.GetName())
			}
			switch o := got.(type) {
			case *corev1.ConfigMap:
				if len(o.Data)+len(o.BinaryData) > 0 {
					t.Errorf("data kept: %v", o.Data)
				}
			case *corev1.Secret:
				if len(o.Data)+len(o.StringData) > 0 {
					t.Error("Secret data kept")
				}
			case *corev1.Service:
				if (o.Spec.ClusterIP != "") != tt.wantSpecKept {
					t.Errorf("spec kept %v, want %v", o.Spec.ClusterIP != "", tt.wantSpecKept)
				}
			case *unstructured.Unstructured:
				if _, ok := o.Object["data"]; ok {
					t.Error("data kept")
				}
			}
		})
	}
}
