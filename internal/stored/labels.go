package stored

// Labels rudder writes on each revision of a release, next to Helm's own.
const (
	LabelValuesDigest = "rudder.dev/values-digest"
	LabelChartDigest  = "rudder.dev/chart-digest"
	// LabelHolder names the rudder process that wrote a revision, so that a
	// revision it left pending can be told from one another writer holds.
	LabelHolder = "rudder.dev/holder"
	// LabelRevision is the number rudder gave the revision it wrote. helm
	// upgrade and helm rollback copy the labels of an older revision onto the
	// one they write, rudder's included; only this one then differs from the
	// revision's own number, which tells their revisions from rudder's.
	LabelRevision = "rudder.dev/revision"
	// LabelWrittenAt is when rudder started the install or upgrade that
	// wrote the revision, in Unix seconds: with the values digest it tells an
	// entry status.history shows from a later revision of the same number.
	LabelWrittenAt = "rudder.dev/written-at"
	// LabelRollbackAs is set, with the number the rollback revision will get,
	// on the revision rudder is about to roll back to. Helm copies that
	// revision's labels onto the pending-rollback revision it stores first, so
	// the pending revision carries its own number here only when rudder wrote
	// it; rudder clears the label once the rollback is stored.
	LabelRollbackAs = "rudder.dev/rollback-as"
	// LabelUninstallOf is set, with the revision's own number, on the newest
	// revision in the write that marks it uninstalling, when rudder
	// uninstalls a release its resource still wants (to install it again, or
	// to drop a failed install). A process killed mid-uninstall then leaves a
	// revision that says it was rudder's, and the next one unlocks it;
	// `helm uninstall` leaves none. Unlock removes it.
	LabelUninstallOf = "rudder.dev/uninstall-of"
)

// Labels rudder writes on a rollback it made to remediate a failure: the
// digests that failed. The release holds there until the spec or the chart
// gives other digests.
const (
	LabelFailedValuesDigest = "rudder.dev/failed-values-digest"
	LabelFailedChartDigest  = "rudder.dev/failed-chart-digest"
)

// LabelReady is set to "true" on a revision rudder wrote once its objects were
// first seen Ready, when the kind has a remediation.readinessTimeout.
const LabelReady = "rudder.dev/ready"

// Labels rudder writes on a rollback revision: which revision it restores,
// and at which generation of the custom resource it was asked for.
const (
	LabelRollbackTo         = "rudder.dev/rollback-to"
	LabelRollbackGeneration = "rudder.dev/rollback-generation"
)

// Labels rudder writes on a revision whose tests ran: the result ("Passed"
// or "Failed") and when the run ended, in Unix seconds.
const (
	LabelTest     = "rudder.dev/test"
	LabelTestedAt = "rudder.dev/tested-at"
)

// Values of LabelTest: how the revision's last test run ended.
const (
	TestPassed = "Passed"
	TestFailed = "Failed"
)
