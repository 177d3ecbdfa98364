package status

import (
	"github.com/rudder-operator/rudder/internal/hook"
)

// AnnotationPaused set to "true" on a custom resource stops rudder from
// installing, upgrading or repairing its release until it is removed.
// Deletion still uninstalls.
const AnnotationPaused = hook.AnnotationPaused

// AnnotationRollbackTo set to a revision number on a custom resource rolls
// its release back to that revision, the way `helm rollback` does, and keeps
// it there until the spec changes or the annotation is removed.
const AnnotationRollbackTo = "rudder.dev/rollback-to"

// AnnotationReconcileRequestedAt set to a new value (a time, by convention)
// asks for a reconcile now, as Flux's reconcile.fluxcd.io/requestedAt does;
// status.lastHandledReconcileAt then echoes the value, so that whoever asked
// knows a reconcile has seen the resource since (`rudder reconcile` waits for
// it).
const AnnotationReconcileRequestedAt = "rudder.dev/reconcile-requested-at"

// AnnotationStatusKey on an object a chart renders publishes the object's
// .data (a map of strings, as a ConfigMap holds) into the custom resource's
// status under the key the annotation names: a Network chart's ConfigMap
// annotated "rudder.dev/status-key: network" shows as status.network. The
// values are those of the deployed revision; a key no longer published is
// removed from status. Keys rudder or a hook owns, a key two objects publish,
// and a Secret's data are refused (condition Published False).
const AnnotationStatusKey = "rudder.dev/status-key"

// AnnotationTestRequestedAt set to a new value (a time, by convention) asks
// rudder to run the chart tests of the deployed revision now, as `helm test`
// does; status.lastHandledTestAt then echoes the value, and the Tested
// condition and status.history say how the run ended (`rudder test` sets it
// and waits for that).
const AnnotationTestRequestedAt = "rudder.dev/test-requested-at"
