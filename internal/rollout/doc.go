// Package rollout stages a change of a kind's chart across its resources: a
// ChartRollout per kind and chart, steps gated on readiness, a failure budget
// that halts them, and undo.
//
// The reconciler asks it, for each resource, which chart to upgrade with
// (Runner.Chart); the Runner learns from the reconciler how each resource
// stands (Fleet) and moves the rollout. Which resources a step covers is
// computed again from what is stored, so a restarted or another process
// continues where the last one was: the step is in the ChartRollout's status,
// and a resource already on the new chart stays on it.
package rollout
