// Package reconcile turns the custom resources of one watched kind into Helm
// releases. Each reconcile observes (the resource, its values, the release's
// stored revisions, the live objects), plans one step, runs it and writes
// status once. Steps live one per file; Helm is reached only through the helm
// package.
package reconcile
