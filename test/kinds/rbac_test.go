package kinds_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// rbacUser is who the manager under test runs as: a user bound to exactly
// the ClusterRole of config/rbac and its Role in rudder's own namespace, so that every test of this package also
// proves that the role a deployment gets is enough for every kind and hook.
const rbacUser = "rudder-under-test"

// asDeployedRole binds the ClusterRole of config/rbac/role.yaml to rbacUser
// and returns cfg impersonating that user.
func asDeployedRole(ctx context.Context, admin client.Client, cfg *rest.Config, root string) (*rest.Config, error) {
	b, err := os.ReadFile(filepath.Join(root, "config", "rbac", "role.yaml"))
	if err != nil {
		return nil, err
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(b, &role); err != nil {
		return nil, fmt.Errorf("config/rbac/role.yaml: %w", err)
	}
	if err := admin.Create(ctx, &role); err != nil {
		return nil, fmt.Errorf("creating ClusterRole %s: %w", role.Name, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: role.ObjectMeta,
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: rbacUser}},
	}
	binding.ResourceVersion, binding.UID = "", ""
	if err := admin.Create(ctx, binding); err != nil {
		return nil, fmt.Errorf("binding ClusterRole %s to %s: %w", role.Name, rbacUser, err)
	}
	as := rest.CopyConfig(cfg)
	as.Impersonate = rest.ImpersonationConfig{UserName: rbacUser}
	return as, nil
}

// bindNamespacedRole creates the Role of config/rbac/leader_election_role.yaml
// in its namespace (where a deployment's manager runs and holds its Leases),
// binds it to rbacUser, and returns the namespace.
func bindNamespacedRole(ctx context.Context, admin client.Client, root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "config", "rbac", "leader_election_role.yaml"))
	if err != nil {
		return "", err
	}
	var role rbacv1.Role
	if err := yaml.UnmarshalStrict(b, &role); err != nil {
		return "", fmt.Errorf("config/rbac/leader_election_role.yaml: %w", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: role.Namespace}}
	if err := admin.Create(ctx, ns); err != nil {
		return "", fmt.Errorf("creating namespace %s: %w", role.Namespace, err)
	}
	if err := admin.Create(ctx, &role); err != nil {
		return "", fmt.Errorf("creating Role %s/%s: %w", role.Namespace, role.Name, err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: role.Namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: rbacUser}},
	}
	if err := admin.Create(ctx, binding); err != nil {
		return "", fmt.Errorf("binding Role %s to %s: %w", role.Name, rbacUser, err)
	}
	return role.Namespace, nil
}
