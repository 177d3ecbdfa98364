package reconcile

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/identity"
	"github.com/rudder-operator/rudder/internal/reconcile/assess"
	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/releasevalues"
	"github.com/rudder-operator/rudder/internal/signature"
	"github.com/rudder-operator/rudder/internal/stored"
	"github.com/rudder-operator/rudder/internal/watches"
)

// observation is everything one reconcile knows, gathered before it acts:
// what status is computed from, and what only the steps use.
type observation struct {
	status.Observation
	key    types.NamespacedName        // the custom resource's key
	actor  identity.Actor              // whom rudder acts as for the resource
	values releasevalues.Values        // the release's, as the kind's pipeline computed them
	chart  func() (*helm.Chart, error) // loads the chart Facts.Want.Chart names; nil: the kind's
	seen   []assess.Seen               // what assess last found of each object of Deployed
	done   bool                        // the step leaves no status to write
}

func (r *Reconciler) observe(ctx context.Context, obj *unstructured.Unstructured) (*observation, error) {
	o := &observation{Observation: status.Observation{Resource: obj}, key: keyOf(obj)}
	o.Release = types.NamespacedName{Namespace: obj.GetNamespace(), Name: r.Watch.ReleaseName(obj.GetName())}
	// The stored revisions come first: a resource a rollout has not promoted
	// yet keeps the chart, and the overrideValues, its deployed revision ran.
	hist, err := stored.History(ctx, r.Storage, o.Release.Namespace, o.Release.Name)
	if err != nil {
		return nil, err
	}
	if err := r.verify(o, hist); err != nil {
		return nil, err
	}
	o.History = hist
	o.Facts.FromHistory(hist)
	var overrides map[string]string
	if o.Facts.Want.Chart, o.chart, overrides, err = r.chartFor(ctx, o); err != nil {
		return nil, err
	}
	pipeline := r.Watch.Values()
	pipeline.Overrides = overrides
	o.values, o.Facts.ValuesErr = pipeline.Own(obj)
	o.Facts.Deleting = !obj.GetDeletionTimestamp().IsZero()
	if actor, err := r.Impersonator.ActorFor(ctx, obj); err != nil {
		reason := status.ReasonServiceAccountInvalid
		switch {
		case errors.Is(err, identity.ErrNotAllowed):
			reason = status.ReasonServiceAccountNotAllowed
		case !errors.Is(err, identity.ErrInvalid):
			return nil, err // the Namespace could not be read: retried
		}
		// rudder acts as no one for it: not even to uninstall it.
		o.Facts.ActorErr = status.ConditionError{Reason: reason, Err: err}
		o.Facts.ValuesErr = o.Facts.ActorErr
	} else {
		o.actor = actor
	}
	if o.Facts.ValuesErr == nil && !o.Facts.Deleting {
		var fixable status.ValuesFromError
		if err := r.readValuesFrom(ctx, o); errors.As(err, &fixable) || errors.As(err, new(status.ConditionError)) {
			o.Facts.ValuesErr = err
		} else if err != nil {
			return nil, err
		}
	}
	o.Facts.Self = r.Holder
	o.Facts.Paused = obj.GetAnnotations()[status.AnnotationPaused] == "true"
	o.WarnDrift = r.Watch.Drift.Mode == watches.DriftWarn
	if !o.Facts.Deleting && o.Facts.ActorErr == nil {
		reader, err := r.actingReader(o, r.Client)
		if err != nil {
			return nil, err
		}
		o.Facts.DependsErr = r.Kinds.Check(ctx, reader, obj, r.Watch.GVK)
	}

	o.LastTest = r.memory.testOverlay(o.key, hist)
	now := r.now()
	o.Facts.CaughtUp = r.memory.caughtUp(o.key, hist, now)
	// Hooks are not run while storage catches up with our last action: that
	// wait writes nothing and ends at the next event of the release. Nor are
	// they while the resource is paused: paused means no writes at all.
	if o.Facts.ValuesErr == nil && !o.Facts.Deleting && !o.Facts.Paused && o.Facts.CaughtUp {
		r.runHooks(ctx, o)
	} else if o.Facts.Paused && !o.Facts.Deleting {
		r.pausedHooks(o)
	}
	o.Facts.Want.Values = o.values.Digest()
	o.Facts.ForeignUnderWay = plan.UnderWay(o.Facts.Foreign, now)
	r.memory.pruneRevisions(o.key, hist, o.Facts.Deployed, plan.FailedRevision(o.Facts.Latest))
	if l := o.Facts.Latest; l != nil && plan.LeftByRudder(l, r.Holder) && l.Labels[stored.LabelHolder] != r.Holder && r.Holders != nil {
		if o.Facts.HolderAlive, err = r.Holders.Alive(ctx, l.Labels[stored.LabelHolder]); err != nil {
			return nil, err
		}
	}
	o.Facts.Remediation, o.Facts.OutOfBand = r.Watch.Remediation, r.Watch.OutOfBand
	o.Facts.Generation = obj.GetGeneration()
	o.Facts.RollbackTo, o.Facts.RollbackErr = rollbackRequest(obj)
	o.Facts.RolledBackAt = rolledBackAt(hist, o.Facts.RollbackTo)
	if _, ok := r.memory.lastFailure(o.key); !ok {
		if fl, ok := status.FailureOf(obj); ok { // counted by a rudder before a restart
			r.memory.restoreFailure(o.key, fl)
		}
	}
	o.Failure = r.memory.failure(o.key, o.Facts.Want)
	o.Facts.Failures, o.Facts.RetryIn = o.Failure.Count, o.Failure.RetryIn(now)
	o.Facts.RemediationFailed = o.Failure.Reason == status.ReasonRemediationFailed

	if d := plan.Assessed(o.Facts); d != nil && !o.Facts.Deleting {
		if o.Deployed, o.seen, err = r.memory.revision(r.Helm, r.Mapper, o.key, o.Release, *d, obj.GetUID()); errors.Is(err, helm.ErrUndecodable) {
			o.Facts.ValuesErr = status.ConditionError{Reason: status.ReasonRevisionUndecodable, Err: fmt.Errorf("%w; delete that Secret if it is not a revision, or the resource to uninstall what can be", err)}
		} else if err != nil {
			return nil, fmt.Errorf("reading deployed revision: %w", err)
		}
	}
	if l := plan.FailedRevision(o.Facts.Latest); l != nil && !o.Facts.Deleting {
		if o.Latest, _, err = r.memory.revision(r.Helm, r.Mapper, o.key, o.Release, *l, obj.GetUID()); errors.Is(err, helm.ErrUndecodable) {
			o.Facts.ValuesErr = status.ConditionError{Reason: status.ReasonRevisionUndecodable, Err: fmt.Errorf("%w; delete that Secret if it is not a revision, or the resource to uninstall what can be", err)}
		} else if err != nil {
			return nil, fmt.Errorf("reading failed revision: %w", err)
		}
	}
	if !o.Facts.Deleting {
		o.Facts.Stalled = r.stalled(ctx, o)
		o.Facts.TestFailed = plan.TestsFailed(o.Facts, r.Watch.Test)
		o.AwaitingTest = r.Watch.Test.Enable && plan.AwaitsTest(o.Facts)
	}
	return o, nil
}

// verify marks the revisions of hist that rudder signed for o's resource
// (stored.Revision.Signed), from their labels; a revision signed by a rudder
// that signed only manifests is verified from its manifest, read once. Of the
// others, those that do not decode are marked (stored.Revision.Undecodable).
func (r *Reconciler) verify(o *observation, hist []stored.Revision) error {
	uid := o.Resource.GetUID()
	for i := range hist {
		rev := &hist[i]
		s := signature.Revision{Namespace: o.Release.Namespace, Name: o.Release.Name, Version: rev.Number, Labels: rev.Labels}
		if r.Signatures.Verify(s, uid) == signature.Signed {
			rev.Signed = true
			continue
		}
		v, err := r.memory.verdict(r.Helm, o.key, o.Release, *rev, uid)
		if err != nil {
			return fmt.Errorf("reading revision %d: %w", rev.Number, err)
		}
		rev.Signed, rev.Undecodable = v.signed, !v.decodes
	}
	return nil
}
