package reconcile

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/owner"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/watches"
)

// unwatchedPoll is how often readiness is looked at while objects are not
// ready and the kind does not watch its dependent objects.
const unwatchedPoll = 10 * time.Second

// maintain keeps an up-to-date release as its deployed revision says, without
// a new revision: it watches the kinds of the release's objects, puts back
// objects deleted or edited outside Helm, and assesses readiness.
//
// Precondition: the newest deployed revision has the wanted values and chart.
// Sets: Released True; Ready True when every object is ready, else False
// naming the first object that is not (ReadinessTimeout once the kind's
// remediation.readinessTimeout has passed); event DriftRepaired per object
// put back.
func (r *Reconciler) maintain(ctx context.Context, o *observation) (ctrl.Result, error) {
	if err := r.watcher.Watch(o.Deployed.Objects); err != nil {
		return ctrl.Result{}, err
	}
	r.assess(ctx, o, true)
	r.reportDrift(o)
	r.markReady(ctx, o)
	if err := r.runTests(ctx, o); err != nil {
		return ctrl.Result{}, err
	}
	res := ctrl.Result{RequeueAfter: r.Watch.ReconcilePeriod}
	if !o.Health.Ready && !r.Watch.WatchDependentResources {
		res.RequeueAfter = unwatchedPoll
	}
	// A revision not Ready yet is looked at again when its readiness timeout
	// ends: nothing else may happen to trigger a reconcile then.
	if left := r.readinessDeadline(o); !o.Health.Ready && left > 0 {
		res = requeueWithin(res, left+100*time.Millisecond)
	}
	return res, nil
}

// assess reads the live objects of the deployed revision, repairing drift when
// repair is set and the kind's drift mode is enabled, and records their health
// in o. In warn mode, a repair's place is taken by a report: o.drift names the
// objects that differ.
func (r *Reconciler) assess(ctx context.Context, o *observation, repair bool) {
	if o.Deployed == nil {
		return
	}
	if repair && (o.WarnDrift || !o.Deployed.Signed) {
		// Reported, not repaired: in warn mode, and for a revision rudder
		// did not write, whose manifest it never applies.
		o.Drift = &[]string{}
	}
	states := make([]status.ObjectState, len(o.Deployed.Objects))
	for i, want := range o.Deployed.Objects {
		states[i] = r.assessObject(ctx, o, want, seenAt(o.seen, i), repair)
	}
	h := status.HealthOf(states)
	o.Health = &h
}

// assessObject reads want's live counterpart from the cache of the releases'
// objects and returns its state, as assess says. An object that has not
// changed since it was last compared with the revision is not compared again
// (driftOf).
func (r *Reconciler) assessObject(ctx context.Context, o *observation, want *unstructured.Unstructured, seen *seenObject, repair bool) status.ObjectState {
	if err := r.beyondReach(o, want); err != nil {
		// A revision rudder did not write may name objects beyond the
		// resource's reach: reported, never read nor compared, so that its
		// fields tell nothing about them.
		if o.Drift != nil {
			*o.Drift = append(*o.Drift, fmt.Sprintf("%s/%s (outside the release's scope)", want.GetKind(), want.GetName()))
		}
		return status.ObjectState{Want: want, Err: err}
	}
	cached, err := r.look(ctx, want)
	switch {
	case err != nil:
		return status.ObjectState{Want: want, Err: err}
	case r.Watch.Drift.Mode == watches.DriftDisabled, !repair && (cached == nil || !r.Watch.Drift.Repairs()):
		return liveState(want, cached, nil, seen, false)
	}
	check, err := r.driftOf(ctx, o, want, cached, seen)
	if err != nil {
		return status.ObjectState{Want: want, Err: err}
	}
	live, differs := check.live, false
	switch {
	case !repair:
		// Unrepaired, an object that differs from the revision was changed
		// by hand, or the cache has not seen the revision's write yet: its
		// status does not tell whether the revision is ready.
		differs = len(check.fields) > 0
	case o.Drift != nil:
		if check.missing || len(check.fields) > 0 {
			*o.Drift = append(*o.Drift, driftEntry(want, check))
		}
	case check.missing || len(check.fields) > 0:
		if live, err = r.putBack(ctx, o, want, check); err != nil {
			return status.ObjectState{Want: want, Err: err}
		}
	}
	if check.missing && live == nil {
		return status.ObjectState{Want: want}
	}
	return liveState(want, cached, live, seen, differs)
}

// beyondReach returns an error naming want when it is an object of a
// revision rudder did not write that lies outside the release's scope.
func (r *Reconciler) beyondReach(o *observation, want *unstructured.Unstructured) error {
	if o.Deployed.Signed {
		return nil // rudder applied it, within the scope
	}
	namespaced, err := r.Client.IsObjectNamespaced(want)
	if err != nil {
		namespaced = want.GetNamespace() != ""
	}
	return r.access(o).Scope.Check(want.GroupVersionKind(), want.GetNamespace(), want.GetName(), namespaced)
}

// liveState is the state of want's live counterpart: live when set, else
// cached, whose status seen keeps while it does not change.
func liveState(want *unstructured.Unstructured, cached client.Object, live *unstructured.Unstructured, seen *seenObject, differs bool) status.ObjectState {
	if live != nil {
		st := status.OfObject(live)
		return status.ObjectState{Want: want, Live: &st, Differs: differs}
	}
	if cached == nil {
		return status.ObjectState{Want: want}
	}
	gvk := want.GroupVersionKind()
	st, err := seen.statusFor(cached, gvk)
	if err != nil {
		return status.ObjectState{Want: want, Err: fmt.Errorf("converting %s %s: %w", gvk.Kind, want.GetName(), err)}
	}
	return status.ObjectState{Want: want, Live: &st, Differs: differs}
}

// look reads the live counterpart of want from the cache of the releases'
// objects without a deep copy (client.UnsafeDisableDeepCopy): most reconciles
// find it unchanged and read no more than its metadata. What it returns
// shares the cache's maps and slices and is not to be changed, unless the
// cache holds less of it than a comparison with want needs (owner.Whole).
// Nil when it does not exist.
func (r *Reconciler) look(ctx context.Context, want *unstructured.Unstructured) (client.Object, error) {
	live := owner.NewObject(r.Client.Scheme(), want.GroupVersionKind())
	err := r.Dependents.Get(ctx, client.ObjectKeyFromObject(want), live, client.UnsafeDisableDeepCopy)
	if err == nil {
		live, err = owner.Whole(ctx, r.APIReader, want, live)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return live, err
}

// read reads the counterpart of want with reader; nil when it does not exist.
// A kind the scheme knows is read as its Go type, which a cache holds in a
// fraction of the memory of an unstructured object, and converted.
func (r *Reconciler) read(ctx context.Context, reader client.Reader, want *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := want.GroupVersionKind()
	obj := owner.NewObject(r.Client.Scheme(), gvk)
	err := reader.Get(ctx, client.ObjectKeyFromObject(want), obj)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	live, err := toUnstructured(obj, gvk)
	if err != nil {
		return nil, fmt.Errorf("converting %s %s: %w", gvk.Kind, want.GetName(), err)
	}
	return live, nil
}
