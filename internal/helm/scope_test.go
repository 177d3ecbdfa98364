package helm

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestScope_Check(t *testing.T) {
	role := schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}
	s := Scope{Namespace: "team-a", ClusterScoped: []schema.GroupKind{role}}
	tests := []struct {
		name       string
		gvk        schema.GroupVersionKind
		namespace  string
		namespaced bool
		want       error
	}{
		{name: "in the namespace", gvk: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, namespace: "team-a", namespaced: true},
		{name: "no namespace: Helm puts it in the release's", gvk: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, namespaced: true},
		{name: "another namespace", gvk: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, namespace: "team-b", namespaced: true, want: ErrOutsideNamespace},
		{name: "an allowed cluster-scoped kind", gvk: role.WithVersion("v1")},
		{name: "another cluster-scoped kind", gvk: schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"}, want: ErrClusterScopedNotAllowed},
		{name: "a namespace", gvk: schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, want: ErrClusterScopedNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Check(tt.gvk, tt.namespace, "x", tt.namespaced)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("Check = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestNamespaceTerminating(t *testing.T) {
	byCause := &apierrors.StatusError{ErrStatus: metav1.Status{Details: &metav1.StatusDetails{
		Causes: []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}}}}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"the status cause", byCause, true},
		{"Helm's joined message", errors.New(`create: namespaces "t" is forbidden: unable to create new content in namespace t because it is being terminated`), true},
		{"another error", errors.New("timed out"), false},
	}
	for _, tt := range tests {
		if got := NamespaceTerminating(tt.err); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
