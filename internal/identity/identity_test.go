package identity

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func resource(annotations map[string]string) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Namespace: "team-a", Name: "front", Annotations: annotations}
}

func TestImpersonator_ActorFor(t *testing.T) {
	tests := []struct {
		name    string
		i       *Impersonator
		obj     *metav1.ObjectMeta
		want    string
		wantErr string
	}{
		{name: "no default, no annotation: rudder", i: &Impersonator{}, obj: resource(nil), want: Self},
		{name: "default", i: &Impersonator{Default: "deployer"}, obj: resource(nil), want: "system:serviceaccount:team-a:deployer"},
		{name: "annotation over the default", i: &Impersonator{Default: "deployer"},
			obj: resource(map[string]string{Annotation: "builder"}), want: "system:serviceaccount:team-a:builder"},
		{name: "annotation without a default", i: &Impersonator{},
			obj: resource(map[string]string{Annotation: "builder"}), want: "system:serviceaccount:team-a:builder"},
		{name: "malformed annotation", i: &Impersonator{Default: "deployer"},
			obj: resource(map[string]string{Annotation: "team-b:admin"}), wantErr: "is not a ServiceAccount name"},
		{name: "empty annotation is no escape from the default", i: &Impersonator{Default: "deployer"},
			obj: resource(map[string]string{Annotation: ""}), wantErr: "is not a ServiceAccount name"},
		{name: "no impersonator: rudder, whatever the annotation", obj: resource(map[string]string{Annotation: "builder"}), want: Self},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := tt.i.ActorFor(tt.obj)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ActorFor: %v, want an error containing %q", err, tt.wantErr)
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
