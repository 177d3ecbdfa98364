// Package depends reads the rudder.dev/depends-on annotation of a custom
// resource: the resources that must be Ready before rudder installs or
// upgrades its release (a WebApp on the Database it uses), and whether they
// are. The value lists resources of rudder's kinds, comma separated, as
// kind/name (same namespace) or namespace/kind/name:
//
//	rudder.dev/depends-on: database/orders, network/backend
//
// A dependency is ready when its Ready condition is True for its current
// generation. A dependency cycle is refused, and so is a namespace other than
// the resource's unless the manager runs with --allow-cross-namespace-refs.
// It must never import Helm or package helm, nor the reconcile, manager, cli,
// admission or preview packages.
package depends
