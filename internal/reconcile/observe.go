package reconcile

import (
	"context"
	"errors"
	"fmt"

	"github.com/rudder-operator/rudder/internal/reconcile/status"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/identity"
	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/storage"
	"github.com/rudder-operator/rudder/internal/values"
	"github.com/rudder-operator/rudder/internal/watches"
)

// observation is everything one reconcile knows, gathered before it acts.
type observation struct {
	obj     *unstructured.Unstructured // the custom resource, as read
	key     types.NamespacedName       // the custom resource's key
	actor   identity.Actor             // whom rudder acts as for the resource
	release types.NamespacedName       // the release's namespace and name
	values  map[string]any
	// digested is what the values digest is computed from when values
	// came from a Secret: values, with the Secret's part replaced by its
	// identity and version. Nil: the digest is of values.
	digested map[string]any
	history  []storage.Revision // newest first
	facts    plan.Facts
	failure  failure

	deployed *revision // the newest deployed revision, decoded
	latest   *revision // the newest revision when it failed, decoded for its description

	// Filled in while the step runs.
	step    plan.Step // the step plan chose
	gate    *gated    // the hook that holds the upgrade (plan.StepGated)
	hooks   []hookRun // what each hook of the kind did this reconcile
	outcome *outcome  // what this reconcile's Helm action did
	health  *health   // readiness of the deployed revision's objects
	done    bool      // the step leaves no status to write

	warnDrift bool      // the kind's driftDetection mode is warn
	drift     *[]string // in warn mode, the objects that differ, once compared

	awaitingTest bool          // the kind's test.enable tests the deployed revision once Ready
	testRun      *helm.TestRun // the run of the chart tests this reconcile recorded
	testRunning  *testRun      // the run of the chart tests under way
	testNotRun   string        // why a test request could not be answered
	testHandled  string        // the AnnotationTestRequestedAt value this reconcile answered
	lastTest     string        // the message of this process's last test run of the release
}

// outcome is what a Helm action of this reconcile did, for the Released
// condition until storage shows it.
type outcome struct {
	phase, reason, message string
	failed                 bool
}

func (r *Reconciler) observe(ctx context.Context, obj *unstructured.Unstructured) (*observation, error) {
	o := &observation{obj: obj, key: keyOf(obj)}
	o.release = types.NamespacedName{Namespace: obj.GetNamespace(), Name: r.Watch.ReleaseName(obj.GetName())}
	o.values, o.facts.ValuesErr = values.For(obj, r.Watch.OverrideValues)
	o.facts.Deleting = !obj.GetDeletionTimestamp().IsZero()
	if actor, err := r.Impersonator.ActorFor(obj); err != nil {
		if o.facts.ValuesErr == nil {
			o.facts.ValuesErr = conditionError{reason: status.ReasonServiceAccountInvalid, err: err}
		}
	} else {
		o.actor = actor
	}
	if o.facts.ValuesErr == nil && !o.facts.Deleting {
		var fixable valuesFromError
		if err := r.readValuesFrom(ctx, o); errors.As(err, &fixable) || errors.As(err, new(conditionError)) {
			o.facts.ValuesErr = err
		} else if err != nil {
			return nil, err
		}
	}
	o.facts.Self = r.Holder
	o.facts.Paused = obj.GetAnnotations()[status.AnnotationPaused] == "true"
	o.warnDrift = r.Watch.Drift.Mode == watches.DriftWarn
	if !o.facts.Deleting {
		reader, err := r.actingReader(o, r.Client)
		if err != nil {
			return nil, err
		}
		o.facts.DependsErr = r.Kinds.Check(ctx, reader, obj, r.Watch.GVK)
	}

	hist, err := storage.History(ctx, r.Storage, o.release.Namespace, o.release.Name)
	if err != nil {
		return nil, err
	}
	o.lastTest = r.memory.testOverlay(o.key, hist)
	o.history = hist
	now := r.now()
	o.facts.CaughtUp = r.memory.caughtUp(o.key, hist, now)
	// Hooks are not run while storage catches up with our last action: that
	// wait writes nothing and ends at the next event of the release. Nor are
	// they while the resource is paused: paused means no writes at all.
	if o.facts.ValuesErr == nil && !o.facts.Deleting && !o.facts.Paused && o.facts.CaughtUp {
		r.runHooks(ctx, o)
	} else if o.facts.Paused && !o.facts.Deleting {
		r.pausedHooks(o)
	}
	digested := o.values
	if o.digested != nil {
		digested = o.digested
	}
	o.facts.Want = plan.Digests{Values: values.Digest(digested), Chart: r.chartDigest}
	o.facts.FromHistory(hist)
	r.memory.pruneRevisions(o.key, hist, o.facts.Deployed, plan.FailedRevision(o.facts.Latest))
	if l := o.facts.Latest; l != nil && plan.LeftByRudder(l, r.Holder) && l.Labels[storage.LabelHolder] != r.Holder && r.Holders != nil {
		if o.facts.HolderAlive, err = r.Holders.Alive(ctx, l.Labels[storage.LabelHolder]); err != nil {
			return nil, err
		}
	}
	o.facts.Remediation, o.facts.OutOfBand = r.Watch.Remediation, r.Watch.OutOfBand
	o.facts.Generation = obj.GetGeneration()
	o.facts.RollbackTo, o.facts.RollbackErr = rollbackRequest(obj)
	o.facts.RolledBackAt = rolledBackAt(hist, o.facts.RollbackTo)
	if _, ok := r.memory.lastFailure(o.key); !ok {
		if fl, ok := failureOf(obj); ok { // counted by a rudder before a restart
			r.memory.restoreFailure(o.key, fl)
		}
	}
	o.failure = r.memory.failure(o.key, o.facts.Want)
	o.facts.Failures, o.facts.RetryIn = o.failure.count, o.failure.retryIn(now)
	o.facts.RemediationFailed = o.failure.reason == status.ReasonRemediationFailed

	if d := o.facts.Deployed; d != nil && !o.facts.Deleting {
		if o.deployed, err = r.memory.revision(r.Helm, r.Mapper, o.key, o.release, *d); errors.Is(err, helm.ErrUndecodable) {
			o.facts.ValuesErr = conditionError{reason: status.ReasonRevisionUndecodable, err: fmt.Errorf("%w; delete that Secret if it is not a revision, or the resource to uninstall what can be", err)}
		} else if err != nil {
			return nil, fmt.Errorf("reading deployed revision: %w", err)
		}
	}
	if l := plan.FailedRevision(o.facts.Latest); l != nil && !o.facts.Deleting {
		if o.latest, err = r.memory.revision(r.Helm, r.Mapper, o.key, o.release, *l); errors.Is(err, helm.ErrUndecodable) {
			o.facts.ValuesErr = conditionError{reason: status.ReasonRevisionUndecodable, err: fmt.Errorf("%w; delete that Secret if it is not a revision, or the resource to uninstall what can be", err)}
		} else if err != nil {
			return nil, fmt.Errorf("reading failed revision: %w", err)
		}
	}
	if !o.facts.Deleting {
		o.facts.Stalled = r.stalled(ctx, o)
		o.facts.TestFailed = testsFailed(o.facts, r.Watch.Test)
		o.awaitingTest = r.Watch.Test.Enable && awaitsTest(o.facts)
	}
	return o, nil
}
