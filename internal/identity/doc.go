// Package identity decides whom rudder acts as for a custom resource, and
// hands out clients that act so: rudder itself, or a ServiceAccount of the
// resource's namespace that rudder impersonates (client-go's
// rest.ImpersonationConfig), named by the manager's --default-service-account
// or the resource's annotation rudder.dev/service-account. The API server's
// RBAC then bounds what a resource can have done to what that account may do.
// It decides nothing about releases and never caches objects.
// It must never import Helm or package helm, nor the reconcile, manager, cli,
// admission or preview packages.
package identity
