package volume

import (
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/rudder-operator/rudder/internal/hook"
)

var _ hook.Permissioner = (*Hook)(nil)

// Rules implements hook.Permissioner: the hook reads the data and backup
// claims and patches their requested size.
func (*Hook) Rules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get", "patch"}},
	}
}
