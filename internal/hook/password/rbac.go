package password

import (
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/rudder-operator/rudder/internal/hook"
)

var _ hook.Permissioner = (*Hook)(nil)

// Rules implements hook.Permissioner: the hook reads the credentials Secret,
// creates it when it is missing and, under deletionPolicy Delete, deletes
// the one it generated.
func (*Hook) Rules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "create", "delete"}},
	}
}
