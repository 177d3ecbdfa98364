package version

import (
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/rudder-operator/rudder/internal/hook"
)

var _ hook.Permissioner = (*Hook)(nil)

// Rules implements hook.Permissioner: the hook writes nothing; it lists the
// workload's pods to report the version they run.
func (*Hook) Rules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}},
	}
}
