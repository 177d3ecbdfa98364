// Package cli is rudder's command line for people on call: `rudder history`
// and `rudder rollback`, with the meaning of `helm history` and `helm
// rollback`, also usable as the kubectl plugin `kubectl rudder`. A rollback
// only asks (the rudder.dev/rollback-to annotation): the reconciler acts.
// `rudder manifests` generates the kinds' CRDs from their charts (crdgen),
// `rudder bundle` the OLM bundle from config/ (package bundle), and `rudder
// rbac` the Role an account needs for rudder to serve a kind as that account
// (package rbac). `rudder diff` shows what applying custom resources would
// change in their releases (package preview); its exit status is kubectl
// diff's, which ExitError carries to main.
package cli
