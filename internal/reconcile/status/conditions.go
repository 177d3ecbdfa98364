package status

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

// Condition reasons of a release that would reach past what its resource
// may do.
const (
	// ReasonForbidden: the account rudder acts as for the resource may not do
	// what the release needs; the message is the API server's, naming the
	// account, the verb and the resource.
	ReasonForbidden = "Forbidden"
	// ReasonOutsideNamespace: the chart rendered an object in another
	// namespace than the resource's.
	ReasonOutsideNamespace = "OutsideNamespace"
	// ReasonClusterScopedNotAllowed: the chart rendered a cluster-scoped
	// object its kind's watches.yaml entry does not list under clusterScoped.
	ReasonClusterScopedNotAllowed = "ClusterScopedNotAllowed"
	// ReasonRevisionNotSigned: a rollback or a repair would apply the manifest
	// of a revision rudder did not write (helm CLI, or a forged storage Secret).
	ReasonRevisionNotSigned = "RevisionNotSigned"
	// ReasonUninstallLeft (event): an uninstall left objects rudder did not
	// make (those a revision it did not write lists) or storage Secrets that
	// do not decode.
	ReasonUninstallLeft = "UninstallLeftObjects"
	// ReasonRevisionUndecodable: a storage Secret of the release does not
	// decode; the message names it.
	ReasonRevisionUndecodable = "RevisionUndecodable"
	// ReasonServiceAccountInvalid: the rudder.dev/service-account annotation
	// does not name a ServiceAccount.
	ReasonServiceAccountInvalid = "ServiceAccountInvalid"
	// ReasonServiceAccountNotAllowed: the rudder.dev/service-account
	// annotation names an account its Namespace does not allow.
	ReasonServiceAccountNotAllowed = "ServiceAccountNotAllowed"
	// ReasonObjectNotOwned: the release would change an object that is there
	// and that rudder did not make for the resource.
	ReasonObjectNotOwned = "ObjectNotOwned"
)

// ReasonHookFailed is the reason of a hook's condition when the hook failed.
const ReasonHookFailed = "HookFailed"

// ConditionPublished says whether the status keys the chart publishes were
// copied into status. It is present only while the chart publishes a key.
const ConditionPublished = "Published"

// Reasons of ConditionPublished.
const (
	ReasonPublished        = "Published"
	ReasonStatusKeyRefused = "StatusKeyRefused"
)

// ConditionTested says how the last run of the deployed revision's chart
// tests ended: True (TestSucceeded), False (TestFailed), Unknown (TestPending:
// the kind's test.enable runs them once the revision is Ready). Absent before
// any run.
const ConditionTested = "Tested"

// Reasons of the Tested condition, and of the events of a run.
const (
	ReasonTestSucceeded = "TestSucceeded"
	ReasonTestFailed    = "TestFailed"
	ReasonTestPending   = "TestPending"
	ReasonTestRunning   = "TestRunning" // a run is under way
	ReasonTestNotRun    = "TestNotRun"  // a request found no revision Helm can test
)
