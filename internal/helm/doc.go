// Package helm is rudder's one wrapper around the Helm SDK: it runs install,
// upgrade and uninstall against Helm's ordinary Secret storage, reads stored
// revisions, loads charts (Chart: what the other packages read of one) and
// parses values in Helm's --set syntax. It decides nothing: when to act is the
// reconcile package's business. No other package of rudder imports the Helm
// SDK (depguard's helm-boundary rule); its tests may, to write what Helm
// writes.
// It must never import the reconcile, manager, cli, admission or preview
// packages.
package helm
