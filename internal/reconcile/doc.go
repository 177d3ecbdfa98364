// Package reconcile turns the custom resources of one watched kind into Helm
// releases. Each reconcile observes (the resource, its values, the release's
// stored revisions, the live objects), lets package plan pick one step, runs
// it and writes status once.
//
// Steps live one per file; Helm is reached only through the helm package.
// Package enqueue says which events reconcile a resource, and when.
// What the reconciler remembers of a resource between its reconciles is one
// entry of memory (memory.go), dropped whole by Forget. It must never import
// what builds on it: the manager, the command line, the webhook or preview.
package reconcile
