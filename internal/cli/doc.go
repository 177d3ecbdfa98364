// Package cli is rudder's command line, built on cobra with cli-runtime's
// kubectl flags (--kubeconfig, --context, -n, --as, --request-timeout, ...):
// for people on call `rudder history`, `rollback` and `test`, with the
// meaning of helm history, helm rollback and helm test, and `reconcile`;
// for platform teams `rbac` (the Role an account needs for rudder to serve
// a kind as that account, package rbac), `shard-of`, `manifests` (the kinds'
// CRDs from their charts, package crdgen) and `bundle` (the OLM bundle,
// package bundle). The same binary is the kubectl plugin `kubectl rudder`.
// A command only asks (an annotation): the reconciler acts.
//
// Each command is one file: newXCommand(e *env) *cobra.Command, listed in
// NewCommand. A command reaches the cluster through e.connect (or
// e.restConfig and e.namespace), prints to e.io, writes its examples for
// `rudder` through e.examples, and returns errors that name the flag or
// argument at fault and the fix; Main prints them and sets the exit code
// (ExitError for a code other than 1).
// Only cmd/rudder imports it, tests aside; it must never import Helm's action
// package, which package helm wraps.
package cli
