// Package guide runs the chart author's guide, docs/adding-a-kind.md, so that
// it cannot drift from what rudder does: the guide's files are written into a
// copy of the repository, its `make manifests` runs `rudder manifests` as the
// Makefile does, and its kubectl and helm sessions run against envtest with a
// rudder manager on the copy's watches.yaml, each printing what the guide says.
// It must never import package reconcile: it drives rudder through its manager
// and command line.
package guide
