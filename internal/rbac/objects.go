package rbac

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Account is the ServiceAccount rudder acts as for a namespace's resources.
type Account struct {
	// Namespace is the resources' namespace, where the account lives.
	Namespace string
	// Name is the ServiceAccount's name: --default-service-account, or a
	// resource's rudder.dev/service-account.
	Name string
}

// User is the name the API server knows the account by, as status.actingAs
// shows it.
func (a Account) User() string {
	return "system:serviceaccount:" + a.Namespace + ":" + a.Name
}

// labels mark what `rudder rbac` generated.
var labels = map[string]string{"app.kubernetes.io/managed-by": "rudder-rbac"}

// RoleName is the name of the Role (and its RoleBinding) of kind.
func RoleName(kind schema.GroupVersionKind) string {
	return "rudder-" + strings.ToLower(kind.Kind)
}

// ServiceAccount returns the account's ServiceAccount. rudder impersonates
// it; no pod needs its token, so none is mounted by default.
func ServiceAccount(a Account) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		TypeMeta:                     metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta:                   metav1.ObjectMeta{Name: a.Name, Namespace: a.Namespace, Labels: labels},
		AutomountServiceAccountToken: ptr.To(false),
	}
}

// Objects returns the Role of kind with r's rules (and the optional ones
// when withOptional), its RoleBinding to a, and, when the chart renders
// cluster-scoped kinds, a ClusterRole and ClusterRoleBinding for them.
func Objects(kind schema.GroupVersionKind, r *Rules, a Account, withOptional bool) []client.Object {
	name := RoleName(kind)
	rules := append([]rbacv1.PolicyRule(nil), r.Namespaced...)
	if withOptional {
		for _, o := range r.Optional {
			rules = append(rules, o.Rules...)
		}
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: a.Name, Namespace: a.Namespace}}
	meta := func(name, ns string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Annotations: map[string]string{
			"rudder.dev/rbac-for": fmt.Sprintf("%s.%s", kind.Kind, kind.Group)}}
	}
	objs := []client.Object{
		&rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
			ObjectMeta: meta(name, a.Namespace), Rules: rules},
		&rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: meta(name, a.Namespace), Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}},
	}
	if len(r.Cluster) > 0 {
		cname := name + "-" + a.Namespace + "-" + a.Name
		objs = append(objs,
			&rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
				ObjectMeta: meta(cname, ""), Rules: r.Cluster},
			&rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
				ObjectMeta: meta(cname, ""), Subjects: subject,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: cname}})
	}
	return objs
}
