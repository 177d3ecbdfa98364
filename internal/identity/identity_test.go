package identity

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func resource(annotations map[string]string) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Namespace: "team-a", Name: "front", Annotations: annotations}
}

// allows returns an Allowed that lists names for namespace team-a alone.
func allows(names ...string) func(context.Context, string) ([]string, error) {
	return func(_ context.Context, ns string) ([]string, error) {
		if ns != "team-a" {
			return nil, nil
		}
		return names, nil
	}
}

func TestImpersonator_ActorFor(t *testing.T) {
	tests := []struct {
		name    string
		i       *Impersonator
		obj     *metav1.ObjectMeta
		want    string
		wantErr error
	}{
		{name: "no default, no annotation: rudder", i: &Impersonator{}, obj: resource(nil), want: Self},
		{name: "default", i: &Impersonator{Default: "deployer"}, obj: resource(nil), want: "system:serviceaccount:team-a:deployer"},
		{name: "annotation the namespace allows, over the default", i: &Impersonator{Default: "deployer", Allowed: allows("builder")},
			obj: resource(map[string]string{Annotation: "builder"}), want: "system:serviceaccount:team-a:builder"},
		{name: "annotation the namespace allows, without a default", i: &Impersonator{Allowed: allows("reader", "builder")},
			obj: resource(map[string]string{Annotation: "builder"}), want: "system:serviceaccount:team-a:builder"},
		{name: "annotation naming the default", i: &Impersonator{Default: "deployer"},
			obj: resource(map[string]string{Annotation: "deployer"}), want: "system:serviceaccount:team-a:deployer"},
		{name: "annotation the namespace does not allow", i: &Impersonator{Default: "deployer", Allowed: allows("builder")},
			obj: resource(map[string]string{Annotation: "admin"}), wantErr: ErrNotAllowed},
		{name: "annotation without an allowed list", i: &Impersonator{},
			obj: resource(map[string]string{Annotation: "admin"}), wantErr: ErrNotAllowed},
		{name: "malformed annotation", i: &Impersonator{Default: "deployer"},
			obj: resource(map[string]string{Annotation: "team-b:admin"}), wantErr: ErrInvalid},
		{name: "empty annotation is no escape from the default", i: &Impersonator{Default: "deployer"},
			obj: resource(map[string]string{Annotation: ""}), wantErr: ErrInvalid},
		{name: "no impersonator: rudder, whatever the annotation", obj: resource(map[string]string{Annotation: "builder"}), want: Self},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := tt.i.ActorFor(context.Background(), tt.obj)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("ActorFor: %v, want %v", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), NamespaceAnnotation) {
					t.Errorf("the error does not say how to fix it: %v", err)
				}
				if named := tt.obj.Annotations[Annotation]; named != "" && !strings.Contains(err.Error(), named) {
					t.Errorf("the error does not name the account %q: %v", named, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.String() != tt.want {
				t.Errorf("ActorFor = %s, want %s", a, tt.want)
			}
		})
	}
}

func TestAllowedBy(t *testing.T) {
	got := AllowedBy(map[string]string{NamespaceAnnotation: " builder, ,reader"})
	if strings.Join(got, "|") != "builder|reader" {
		t.Errorf("AllowedBy = %q", got)
	}
	if AllowedBy(nil) != nil {
		t.Error("AllowedBy(nil) is not empty")
	}
}
