// Package helm is rudder's one wrapper around Helm 4's SDK: it runs install,
// upgrade, rollback, uninstall and tests through Helm's own actions, stores
// revisions through Helm's own Secrets driver, validates values with Helm's
// own schema check, reads stored revisions, loads charts (Chart: what the
// other packages read of one) and parses values in Helm's --set syntax. It
// decides nothing: when to act is the reconcile package's business. No other
// package of rudder imports the Helm SDK (depguard's helm-sdk and
// helm-boundary rules); its tests may, to write what Helm writes.
//
// Helm's actions run as Helm runs them, but for three wrappers, each adding
// what Helm lacks and rudder needs:
//
//   - Signing (trust.go, trusted): the storage driver every action goes
//     through signs the revisions it writes for the custom resource, and
//     shows Helm only the revisions signed for it. A revision written by the
//     helm CLI, by a rudder for an earlier resource of the same name, or
//     forged by whoever may create Secrets, is never the base of an upgrade,
//     a lock, a rollback target, nor what an uninstall deletes.
//   - Confinement to the resource's scope (scope.go, confined): Helm's kube
//     client refuses any object outside the resource's namespace or of a
//     cluster-scoped kind its watch does not allow, and changes or deletes an
//     existing object only when the resource owns it.
//   - A lock that survives a crash (driver.go): a storage write carries the
//     resourceVersion it was read at (conditionalSecrets), so that of two
//     writers only one moves a revision on, and the revision an uninstall
//     marks uninstalling says who holds it (markingUninstall), so that a
//     process killed mid-action leaves a lock that is unlocked (Unlock), not
//     waited for.
//
// The one cache is the cluster's capabilities, read at most once a minute
// (capabilities.go); WithoutCaches turns it off.
//
// How actions apply (server-side, forced, under Helm's field manager) and
// wait (hooks only) is said once, by the constants in client.go.
//
// It must never import the reconcile, manager, cli, admission or preview
// packages.
package helm
