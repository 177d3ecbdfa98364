// Package version is the "version" hook: it reports which version of a
// workload's image the ready pods really run (status.currentVersion) and how
// many pods there are (status.currentReplicas), from the pods themselves
// rather than from the spec. It never changes anything in the cluster.
// It must never import Helm or package helm, nor the reconcile, manager, cli,
// admission or preview packages.
package version
