package reconcile

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/identity"
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
	facts    facts
	failure  failure

	deployed *revision // the newest deployed revision, decoded
	latest   *revision // the newest revision when it failed, decoded for its description

	// Filled in while the step runs.
	step    step      // the step plan chose
	gate    *gated    // the hook that holds the upgrade (stepGated)
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
	o.values, o.facts.valuesErr = values.For(obj, r.Watch.OverrideValues)
	o.facts.deleting = !obj.GetDeletionTimestamp().IsZero()
	if actor, err := r.Impersonator.ActorFor(obj); err != nil {
		if o.facts.valuesErr == nil {
			o.facts.valuesErr = conditionError{reason: ReasonServiceAccountInvalid, err: err}
		}
	} else {
		o.actor = actor
	}
	if o.facts.valuesErr == nil && !o.facts.deleting {
		var fixable valuesFromError
		if err := r.readValuesFrom(ctx, o); errors.As(err, &fixable) || errors.As(err, new(conditionError)) {
			o.facts.valuesErr = err
		} else if err != nil {
			return nil, err
		}
	}
	o.facts.self = r.Holder
	o.facts.paused = obj.GetAnnotations()[AnnotationPaused] == "true"
	o.warnDrift = r.Watch.Drift.Mode == watches.DriftWarn
	if !o.facts.deleting {
		reader, err := r.actingReader(o, r.Client)
		if err != nil {
			return nil, err
		}
		o.facts.dependsErr = r.Kinds.Check(ctx, reader, obj, r.Watch.GVK)
	}

	hist, err := storage.History(ctx, r.Storage, o.release.Namespace, o.release.Name)
	if err != nil {
		return nil, err
	}
	o.lastTest = r.tested.overlay(o.key, hist)
	o.history = hist
	now := r.now()
	o.facts.caughtUp = r.expect.caughtUp(o.key, hist, now)
	// Hooks are not run while storage catches up with our last action: that
	// wait writes nothing and ends at the next event of the release. Nor are
	// they while the resource is paused: paused means no writes at all.
	if o.facts.valuesErr == nil && !o.facts.deleting && !o.facts.paused && o.facts.caughtUp {
		r.runHooks(ctx, o)
	} else if o.facts.paused && !o.facts.deleting {
		r.pausedHooks(o)
	}
	digested := o.values
	if o.digested != nil {
		digested = o.digested
	}
	o.facts.want = digests{values: values.Digest(digested), chart: r.chartDigest}
	o.facts.fromHistory(hist)
	r.revisions.prune(o.release, hist, o.facts.deployed, failedRevision(o.facts.latest))
	if l := o.facts.latest; l != nil && leftByRudder(l, r.Holder) && l.Labels[LabelHolder] != r.Holder && r.Holders != nil {
		if o.facts.holderAlive, err = r.Holders.Alive(ctx, l.Labels[LabelHolder]); err != nil {
			return nil, err
		}
	}
	o.facts.remediation, o.facts.outOfBand = r.Watch.Remediation, r.Watch.OutOfBand
	o.facts.generation = obj.GetGeneration()
	o.facts.rollbackTo, o.facts.rollbackErr = rollbackRequest(obj)
	o.facts.rolledBackAt = rolledBackAt(hist, o.facts.rollbackTo)
	if _, ok := r.failures.current(o.key); !ok {
		if fl, ok := failureOf(obj); ok { // counted by a rudder before a restart
			r.failures.restore(o.key, fl)
		}
	}
	o.failure = r.failures.get(o.key, o.facts.want)
	o.facts.failures, o.facts.retryIn = o.failure.count, o.failure.retryIn(now)
	o.facts.remediationFailed = o.failure.reason == ReasonRemediationFailed

	if d := o.facts.deployed; d != nil && !o.facts.deleting {
		if o.deployed, err = r.revisions.get(r.Helm, r.Mapper, o.release, *d); errors.Is(err, helm.ErrUndecodable) {
			o.facts.valuesErr = conditionError{reason: ReasonRevisionUndecodable, err: fmt.Errorf("%w; delete that Secret if it is not a revision, or the resource to uninstall what can be", err)}
		} else if err != nil {
			return nil, fmt.Errorf("reading deployed revision: %w", err)
		}
	}
	if l := failedRevision(o.facts.latest); l != nil && !o.facts.deleting {
		if o.latest, err = r.revisions.get(r.Helm, r.Mapper, o.release, *l); errors.Is(err, helm.ErrUndecodable) {
			o.facts.valuesErr = conditionError{reason: ReasonRevisionUndecodable, err: fmt.Errorf("%w; delete that Secret if it is not a revision, or the resource to uninstall what can be", err)}
		} else if err != nil {
			return nil, fmt.Errorf("reading failed revision: %w", err)
		}
	}
	if !o.facts.deleting {
		o.facts.stalled = r.stalled(ctx, o)
		o.facts.testFailed = testsFailed(o.facts, r.Watch.Test)
		o.awaitingTest = r.Watch.Test.Enable && awaitsTest(o.facts)
	}
	return o, nil
}

// failedRevision returns r when it failed, else nil.
func failedRevision(r *storage.Revision) *storage.Revision {
	if r == nil || r.Status != "failed" {
		return nil
	}
	return r
}

// fromHistory sets the facts read from a release's history, newest first.
func (f *facts) fromHistory(hist []storage.Revision) {
	for i := range hist {
		if f.latest == nil {
			f.latest = &hist[i]
		}
		if hist[i].Status == "deployed" {
			f.deployed = &hist[i]
			break
		}
	}
	for i := range hist {
		if hist[i].Status == "deployed" || hist[i].Status == "superseded" {
			f.everDeployed = true
			break
		}
	}
	f.ours = newestByRudder(hist)
	f.previous = previousDeployed(hist, f.deployed)
}
