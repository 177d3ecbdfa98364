// Package enqueue decides which events reconcile a custom resource, and
// when: the predicate of the custom resources' own events (Resources), and
// the watches of the objects their releases render (Dependents), whose
// updates that leave an object plainly not ready wait a moment (settle), so
// that a pod replaced at once costs one reconcile and no status write.
//
// It must never import the reconciler (internal/reconcile), Helm or the helm
// package: it sees objects and events, never releases.
package enqueue
