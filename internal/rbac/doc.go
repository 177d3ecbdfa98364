// Package rbac computes the Role an account needs so that rudder, acting as
// that account (--default-service-account, or the annotation
// rudder.dev/service-account), can serve a kind in one namespace: the kinds
// the kind's chart can render, manifests and Helm hooks alike, over its ci/
// values files (its defaults when it has none), the kind's sample and every boolean
// toggle of its schema; the kinds its templates look up; and what the kind's
// hooks declare (hook.Permissioner). It reads charts and renders them client
// side; it never talks to the cluster itself (the caller hands it a
// RESTMapper) and applies nothing.
// Outside its tests it must never import the reconcile, manager, cli, admission
// or preview packages.
package rbac
