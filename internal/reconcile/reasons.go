package reconcile

import "github.com/rudder-operator/rudder/internal/hook"

// Condition types rudder owns on every custom resource.
const (
	// ConditionReady is True when every object of the deployed release is ready.
	ConditionReady = "Ready"
	// ConditionReleased is True when the release's deployed revision holds the
	// custom resource's current values and the kind's current chart.
	ConditionReleased = "Released"
	// ConditionPaused is True while the resource carries AnnotationPaused.
	ConditionPaused = "Paused"
	// ConditionOutOfBand is True while the serving revision was written by
	// another Helm client (helm upgrade or helm rollback by hand), False once
	// a revision rudder wrote replaced it, and absent when history holds no
	// such revision.
	ConditionOutOfBand = "OutOfBand"
	// ConditionDrifted is True while objects of the deployed revision differ
	// from it and the kind's driftDetection mode is warn, False when none
	// does, and absent in the other modes.
	ConditionDrifted = "Drifted"
)

// AnnotationPaused set to "true" on a custom resource stops rudder from
// installing, upgrading or repairing its release until it is removed.
// Deletion still uninstalls.
const AnnotationPaused = hook.AnnotationPaused

// Condition reasons, and event reasons where an event says the same.
const (
	ReasonInstallSucceeded = "InstallSucceeded"
	ReasonInstallFailed    = "InstallFailed"
	ReasonUpgradeSucceeded = "UpgradeSucceeded"
	ReasonUpgradeFailed    = "UpgradeFailed"
	ReasonUninstalling     = "Uninstalling"
	ReasonUninstalled      = "Uninstalled"
	ReasonUninstallFailed  = "UninstallFailed"
	ReasonValuesInvalid    = "ValuesInvalid"
	ReasonUpgradeGated     = "UpgradeGated" // Released: a hook holds the upgrade (hook.Gate)
	// Released: a values source (valuesFrom, rudder.dev/values-from) is
	// missing or its key holds no values; malformed sources.
	ReasonValuesFromNotReady = "ValuesFromNotReady"
	ReasonValuesFromInvalid  = "ValuesFromInvalid"
	ReasonPending            = "OperationPending"
	ReasonUnlocked           = "Unlocked"
	ReasonRolledBack         = "RolledBack"
	ReasonRollbackFailed     = "RollbackFailed"
	ReasonRollbackInvalid    = "RollbackInvalid"
	ReasonRetriesExhausted   = "RetriesExhausted"
	ReasonDriftRepaired      = "DriftRepaired"
	ReasonDriftRepairFail    = "DriftRepairFailed"
	ReasonDrifted            = "Drifted"       // Drifted True; event DriftDetected says the same
	ReasonDriftDetected      = "DriftDetected" // event: the objects that differ changed (driftDetection.mode: warn)
	ReasonNoDrift            = "NoDrift"       // Drifted False
	ReasonUnselected         = "Unselected"    // event: the labels left the watch's selector; the release stays

	// Remediation (watches.yaml remediation).
	ReasonReadinessTimeout  = "ReadinessTimeout"         // Ready: the revision was not Ready in time
	ReasonRemediated        = "RolledBackAfterFailure"   // Released, Ready: rolled back, held until the spec changes
	ReasonRemediationFailed = "RemediationFailed"        // Released: the remediating rollback failed
	ReasonFailedInstallGone = "FailedInstallUninstalled" // event: a failed install was uninstalled

	// Out-of-band Helm (watches.yaml outOfBand).
	ReasonOutOfBand          = "OutOfBand"          // Released: another Helm client's revision serves; event
	ReasonOutOfBandKept      = "OutOfBandKept"      // OutOfBand True: left serving (outOfBand: keep)
	ReasonOutOfBandReverting = "OutOfBandReverting" // OutOfBand True: being upgraded back to the spec
	ReasonOutOfBandReplaced  = "Replaced"           // OutOfBand False: a revision rudder wrote serves again

	ReasonReady          = "Ready"
	ReasonWaitingForHook = "WaitingForHook"
	ReasonProgressing    = "Progressing"
	ReasonObjectFail     = "ObjectFailed"
	ReasonNotReleased    = "NotReleased"
)

// Phases, as the seed's users read them in `kubectl get`.
const (
	PhasePending   = "Pending"
	PhaseDeploying = "Deploying"
	PhaseRunning   = "Running"
	PhaseUpdating  = "Updating"
	PhaseFailed    = "Failed"
)

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

// Finalizer keeps a custom resource until its release is uninstalled.
const Finalizer = "rudder.dev/release"
