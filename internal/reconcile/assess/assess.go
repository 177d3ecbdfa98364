package assess

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/identity"
	"github.com/rudder-operator/rudder/internal/owner"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/watches"
)

// Assessor assesses the live objects of a kind's deployed revisions:
// whether they are ready, and whether they drifted from the revision, which
// it repairs when asked to.
type Assessor struct {
	Kind  string        // the watched kind, for the metrics
	Drift watches.Drift // the kind's driftDetection
	// Cache holds the objects of the releases (owner.NewCache).
	Cache client.Reader
	// APIReader reads what the cache cannot show.
	APIReader client.Reader
	// Client is rudder's own: its scheme and REST mapping, and the writer
	// when rudder acts as itself for a resource.
	Client client.Client
	// Impersonator hands out the clients that act as the account rudder
	// acts as for a resource; nil: rudder acts as itself.
	Impersonator *identity.Impersonator
	Events       events.EventRecorder // a repair's events, about the custom resource
}

// Target is one deployed revision to assess.
type Target struct {
	Resource *unstructured.Unstructured // the custom resource
	Actor    identity.Actor             // whom rudder acts as for it
	Revision *status.Revision
	Seen     []Seen     // what earlier assessments found of each object of Revision
	Scope    helm.Scope // where the release's objects may be

	drift *[]string // in a report, the objects that differ
}

// Assess reads the live objects of t's revision, repairing drift when repair
// is set and the kind's drift mode is enabled, and returns their health. In
// warn mode, and for a revision rudder did not write, whose manifest it never
// applies, a report takes a repair's place: drift names the objects that
// differ. Drift is nil when no report was asked for.
func (a Assessor) Assess(ctx context.Context, t Target, repair bool) (status.Health, *[]string) {
	if repair && (a.Drift.Mode == watches.DriftWarn || !t.Revision.Signed) {
		t.drift = &[]string{}
	}
	states := make([]status.ObjectState, len(t.Revision.Objects))
	for i, want := range t.Revision.Objects {
		states[i] = a.assessObject(ctx, &t, want, seenAt(t.Seen, i), repair)
	}
	return status.HealthOf(states), t.drift
}

// writer returns the client that writes on t's resource's behalf: one
// impersonating its account, or rudder's own.
func (a Assessor) writer(t *Target) (client.Client, error) {
	c, err := a.Impersonator.Client(t.Actor)
	if c == nil || err != nil {
		return a.Client, err
	}
	return c, nil
}

// assessObject reads want's live counterpart from the cache of the releases'
// objects and returns its state, as Assess says. An object that has not
// changed since it was last compared with the revision is not compared again
// (driftOf).
func (a Assessor) assessObject(ctx context.Context, t *Target, want *unstructured.Unstructured, seen *Seen, repair bool) status.ObjectState {
	if err := a.beyondReach(t, want); err != nil {
		// A revision rudder did not write may name objects beyond the
		// resource's reach: reported, never read nor compared, so that its
		// fields tell nothing about them.
		if t.drift != nil {
			*t.drift = append(*t.drift, fmt.Sprintf("%s/%s (outside the release's scope)", want.GetKind(), want.GetName()))
		}
		return status.ObjectState{Want: want, Err: err}
	}
	cached, err := a.look(ctx, want)
	switch {
	case err != nil:
		return status.ObjectState{Want: want, Err: err}
	case a.Drift.Mode == watches.DriftDisabled, !repair && (cached == nil || !a.Drift.Repairs()):
		return liveState(want, cached, nil, seen, false)
	}
	check, err := a.driftOf(ctx, t, want, cached, seen)
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
	case t.drift != nil:
		if check.missing || len(check.fields) > 0 {
			*t.drift = append(*t.drift, driftEntry(want, check))
		}
	case check.missing || len(check.fields) > 0:
		if live, err = a.putBack(ctx, t, want, check); err != nil {
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
func (a Assessor) beyondReach(t *Target, want *unstructured.Unstructured) error {
	if t.Revision.Signed {
		return nil // rudder applied it, within the scope
	}
	namespaced, err := a.Client.IsObjectNamespaced(want)
	if err != nil {
		namespaced = want.GetNamespace() != ""
	}
	return t.Scope.Check(want.GroupVersionKind(), want.GetNamespace(), want.GetName(), namespaced)
}

// liveState is the state of want's live counterpart: live when set, else
// cached, whose status seen keeps while it does not change.
func liveState(want *unstructured.Unstructured, cached client.Object, live *unstructured.Unstructured, seen *Seen, differs bool) status.ObjectState {
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
func (a Assessor) look(ctx context.Context, want *unstructured.Unstructured) (client.Object, error) {
	live := owner.NewObject(a.Client.Scheme(), want.GroupVersionKind())
	err := a.Cache.Get(ctx, client.ObjectKeyFromObject(want), live, client.UnsafeDisableDeepCopy)
	if err == nil {
		live, err = owner.Whole(ctx, a.APIReader, want, live)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return live, err
}

// read reads the counterpart of want with reader; nil when it does not exist.
// A kind the scheme knows is read as its Go type, which a cache holds in a
// fraction of the memory of an unstructured object, and converted.
func (a Assessor) read(ctx context.Context, reader client.Reader, want *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := want.GroupVersionKind()
	obj := owner.NewObject(a.Client.Scheme(), gvk)
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

// seenAt returns what Assess last found of object i of a revision, from
// seen, what memory keeps of the revision's objects (shared by every get of
// the revision).
func seenAt(seen []Seen, i int) *Seen {
	if i < len(seen) {
		return &seen[i]
	}
	return &Seen{}
}
