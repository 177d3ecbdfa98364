// Package signature tells the revisions rudder wrote for a custom resource
// from every other stored revision: each revision rudder writes carries a
// keyed digest (HMAC-SHA256) of what identifies it and of rudder's labels,
// and a digest of what it applies. A tenant who may create Secrets can store
// a revision, but not one that verifies: only rudder and the cluster admin can
// read the key. It decides nothing about releases and reads nothing from the
// cluster.
// It must never import Helm or package helm, nor the reconcile, manager, cli,
// admission or preview packages.
package signature
