// Package reconcile is the controller that turns the custom resources of one
// watched kind into Helm releases. Each reconcile observes (the resource, its
// values, the release's stored revisions, the live objects), lets package
// plan pick one step, runs it and writes the status package status computes
// from what it observed and what the step did.
//
// Its subpackages hold what needs no controller: plan (the pure planner:
// facts, plan, checks), action (the steps that act on a release, one type
// per step: install, upgrade, rollback, uninstall, the upkeep of a deployed
// release…), charttest (a deployed revision's chart tests, run off the
// workers), assess (the live objects of a deployed revision: readiness, drift
// by field ownership, repair), status (conditions, phase and reasons from an
// observation and an outcome) and enqueue (which events reconcile a
// resource, and when). Here stay the wiring and the handlers of the
// controller, what a reconcile observes, and the steps that only wait. What
// the reconciler remembers of a resource between its reconciles is one entry
// of memory (memory.go), dropped whole by Forget.
//
// It must never import what builds on it: the manager, the command line, the
// webhook or preview.
package reconcile
