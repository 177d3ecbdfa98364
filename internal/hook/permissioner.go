package hook

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// Permissioner is implemented by a hook that reads or writes objects in the
// cluster on a resource's behalf. `rudder rbac` adds its rules to the Role it
// prints for every kind that enables the hook, so that an account given that
// Role is enough when rudder impersonates it (--default-service-account, or
// the annotation rudder.dev/service-account).
type Permissioner interface {
	// Rules returns the rules the account of a resource's namespace needs for
	// what the hook writes on its behalf, and for the reads that go with
	// those writes. They apply in the resource's own namespace.
	Rules() []rbacv1.PolicyRule
}
