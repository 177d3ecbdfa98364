// Package plan picks the one step a reconcile takes for a release: from the
// facts observed about a custom resource and its release's stored revisions
// (Facts), Plan returns a Step, and Step.Check says whether the facts hold
// what that step needs. It also answers the questions about revisions that
// plan, status and the steps share (who wrote a revision, whether it is
// pending, what a remediation rolls back to).
//
// It is pure: no I/O, no clock, no clients. It must never import
// controller-runtime, client-go, Helm, the helm package or the reconciler;
// what it knows of a revision is its storage.Revision.
package plan
