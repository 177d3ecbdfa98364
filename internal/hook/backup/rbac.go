package backup

import (
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/rudder-operator/rudder/internal/hook"
)

var (
	_ hook.Permissioner = (*Hook)(nil)
	_ hook.Permissioner = (*Restore)(nil)
)

// Rules implements hook.Permissioner: the hook keeps the backup CronJob and
// its claim, creates backup Jobs (on request and before a major upgrade),
// reads their pods' reports and, under deletionPolicy Delete, deletes the
// Database's claims.
func (*Hook) Rules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"batch"}, Resources: []string{"cronjobs"}, Verbs: []string{"get", "create", "update", "patch", "delete"}},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"get", "list", "create"}},
		{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get", "list", "create", "delete", "deletecollection"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
	}
}

// Rules implements hook.Permissioner: the restore reads the new Database's
// data claim and the source's backup claim, creates the restore Job, reads
// its pod's report and marks the data claim restored.
func (*Restore) Rules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"get", "create"}},
		{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
	}
}
