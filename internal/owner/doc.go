// Package owner ties a release's objects to their custom resource: a Helm
// post-renderer writes the tie into each rendered object (an owner reference,
// or an annotation where a reference cannot reach), and an event handler reads
// it back to enqueue the custom resource when one of its objects changes.
// Its cache of the releases' objects (NewCache) holds of each only what
// rudder reads, whoever labeled it; Whole completes a held object when a
// comparison needs more. It must not decide what to do about a change.
// It must never import the reconcile, manager, cli, admission or preview
// packages.
package owner

// Annotation marks objects that cannot carry an owner reference to their
// custom resource (cluster-scoped objects, objects in another namespace).
// Its value is "<Kind>.<group>/<namespace>/<name>".
const Annotation = "rudder.dev/owner"
