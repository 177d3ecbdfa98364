package status

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/stored"
)

// Observation is what one reconcile saw of a custom resource and its
// release, and what its step did: everything its status is computed from.
type Observation struct {
	Resource *unstructured.Unstructured // the custom resource, as read
	Release  types.NamespacedName       // the release's namespace and name
	History  []stored.Revision          // newest first
	Facts    plan.Facts
	Failure  Failure // the failed tries for the wanted digests

	Deployed *Revision // the newest deployed revision, decoded
	Latest   *Revision // the newest revision when it failed, decoded for its description

	// Filled in while the step runs.
	Step    plan.Step // the step plan chose
	Gate    *Gate     // the hook that holds the upgrade (plan.StepGated)
	Hooks   []HookRun // what each hook of the kind did this reconcile
	Outcome *Outcome  // what this reconcile's Helm action did
	Health  *Health   // readiness of the deployed revision's objects

	WarnDrift bool      // the kind's driftDetection mode is warn
	Drift     *[]string // in warn mode, the objects that differ, once compared

	AwaitingTest bool          // the kind's test.enable tests the deployed revision once Ready
	TestRun      *helm.TestRun // the run of the chart tests this reconcile recorded
	TestStarted  time.Time     // when the run of the chart tests under way started; zero: none is
	TestNotRun   string        // why a test request could not be answered
	TestHandled  string        // the AnnotationTestRequestedAt value this reconcile answered
	LastTest     string        // the message of this process's last test run of the release
}

// Outcome is what a Helm action of this reconcile did, for the Released
// condition until storage shows it.
type Outcome struct {
	Phase, Reason, Message string
	Failed                 bool
}

// ConditionError is a problem of the resource or its release that no retry
// gets past, reported in Released with its own reason.
type ConditionError struct {
	Reason string
	Err    error
}

func (e ConditionError) Error() string { return e.Err.Error() }
func (e ConditionError) Unwrap() error { return e.Err }

// ValuesFromError is a problem with a resource's values sources: a source
// missing, malformed, or unreadable, reported in Released as
// ValuesFromNotReady or ValuesFromInvalid. What a Secret holds is never in it.
type ValuesFromError struct{ Err error }

func (e ValuesFromError) Error() string { return e.Err.Error() }
func (e ValuesFromError) Unwrap() error { return e.Err }

// Revision is a decoded stored revision and the objects of its manifest,
// with namespaces filled in as Helm applied them. The objects are the
// reconcile's own, to read and change.
type Revision struct {
	*helm.Release
	Objects []*unstructured.Unstructured
}
