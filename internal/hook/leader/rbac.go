package leader

import (
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/rudder-operator/rudder/internal/hook"
)

var _ hook.Permissioner = (*Hook)(nil)

// Rules implements hook.Permissioner: the hook reads the pods the resource
// selects and labels or unlabels them, and keeps the resource's Lease.
func (*Hook) Rules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "patch"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update", "delete"}},
	}
}
