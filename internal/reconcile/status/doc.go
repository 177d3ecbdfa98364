// Package status is what rudder reports on each custom resource: the part of
// .status the reconciler owns (phase, message, replicas, release, history,
// failures), the conditions with their reasons, and the annotations whose
// effect status answers for (a pause, a rollback, a reconcile or test
// request, a published key). It computes status from what one reconcile
// observed and what its step did; it reads and writes nothing in the
// cluster, and the reconciler writes what it computes.
//
// It must never import the reconciler, Helm's SDK, a client or a cache.
package status
