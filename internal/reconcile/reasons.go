package reconcile

// Condition types rudder owns on every custom resource.
const (
	// ConditionReady is True when every object of the deployed release is ready.
	ConditionReady = "Ready"
	// ConditionReleased is True when the release's deployed revision holds the
	// custom resource's current values and the kind's current chart.
	ConditionReleased = "Released"
	// ConditionPaused is True while the resource carries AnnotationPaused.
	ConditionPaused = "Paused"
)

// AnnotationPaused set to "true" on a custom resource stops rudder from
// installing, upgrading or repairing its release until it is removed.
// Deletion still uninstalls.
const AnnotationPaused = "rudder.dev/paused"

// Condition reasons, and event reasons where an event says the same.
const (
	ReasonInstalling       = "Installing"
	ReasonInstallSucceeded = "InstallSucceeded"
	ReasonInstallFailed    = "InstallFailed"
	ReasonUpgrading        = "Upgrading"
	ReasonUpgradeSucceeded = "UpgradeSucceeded"
	ReasonUpgradeFailed    = "UpgradeFailed"
	ReasonUninstalling     = "Uninstalling"
	ReasonUninstalled      = "Uninstalled"
	ReasonUninstallFailed  = "UninstallFailed"
	ReasonValuesInvalid    = "ValuesInvalid"
	ReasonPending          = "OperationPending"
	ReasonUnlocked         = "Unlocked"
	ReasonRolledBack       = "RolledBack"
	ReasonRollbackFailed   = "RollbackFailed"
	ReasonRollbackInvalid  = "RollbackInvalid"
	ReasonRetriesExhausted = "RetriesExhausted"
	ReasonDriftRepaired    = "DriftRepaired"
	ReasonDriftRepairFail  = "DriftRepairFailed"

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

// Labels rudder writes on each revision of a release, next to Helm's own.
const (
	LabelValuesDigest = "rudder.dev/values-digest"
	LabelChartDigest  = "rudder.dev/chart-digest"
	// LabelHolder names the rudder process that wrote a revision, so that a
	// revision it left pending can be told from one another writer holds.
	LabelHolder = "rudder.dev/holder"
)

// AnnotationRollbackTo set to a revision number on a custom resource rolls
// its release back to that revision, the way `helm rollback` does, and keeps
// it there until the spec changes or the annotation is removed.
const AnnotationRollbackTo = "rudder.dev/rollback-to"

// Labels rudder writes on a rollback revision: which revision it restores,
// and at which generation of the custom resource it was asked for.
const (
	LabelRollbackTo         = "rudder.dev/rollback-to"
	LabelRollbackGeneration = "rudder.dev/rollback-generation"
)

// Finalizer keeps a custom resource until its release is uninstalled.
const Finalizer = "rudder.dev/release"
