// Package helm is rudder's one wrapper around the Helm SDK: it runs install,
// upgrade and uninstall against Helm's ordinary Secret storage, reads stored
// revisions, and computes chart digests. It decides nothing: when to act is
// the reconcile package's business. No other package imports helm's action.
// It must never import the reconcile, manager, cli, admission or preview
// packages.
package helm
