package rollout

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/shard"
	"github.com/rudder-operator/rudder/internal/watches"
)

// Field managers of a ChartRollout's status: the coordinator's, and each
// shard's for its entry of status.shards.
const (
	FieldManager      = "rudder-rollout"
	shardFieldManager = "rudder-rollout-shard-"
)

// Runner moves the rollout of one kind's chart in this process: it counts
// the resources of its shard, promotes them step by step and, in the
// process that owns cluster-scoped objects, moves the steps.
type Runner struct {
	Kind   schema.GroupVersionKind
	Policy watches.Rollout
	// Chart and Digest are the kind's chart, as name-version and as its
	// revisions' chart digest label (watches.Watch.ChartDigest), and
	// OverrideValues its overrideValues.
	Chart, Digest  string
	OverrideValues map[string]string
	Shard          shard.Shard
	// Namespaces are those the manager watches; none: all.
	Namespaces []string
	// Reader reads ChartRollouts (a cache of them, unsharded); Client
	// writes them.
	Reader client.Reader
	Client client.Client
	Events events.EventRecorder
	Clock  clock.PassiveClock
	// Fleet is the kind's reconciler: the resources it counts, and whether
	// it counted every one it holds (until then, no resource is promoted).
	Fleet interface {
		Members(ctx context.Context) ([]Member, bool, error)
		// FleetVersion changes whenever Members would return other members.
		FleetVersion() uint64
	}
	// Enqueue reconciles the resources whose chart the rollout changed.
	Enqueue func(ctx context.Context, keys []types.NamespacedName)
	// Every is how often the rollout is looked at; default one second.
	Every time.Duration

	mu       sync.Mutex
	promoted map[types.NamespacedName]bool // nil until the rollout was read: only those on the chart run it
	timers   *timers
	// counted is what the last count was made from: a rollout at rest
	// (complete, superseded, undone, halted, paused) is counted again only
	// when it or the fleet changed.
	counted struct {
		resourceVersion string
		fleet           uint64
	}
	// rowWritten and statusWritten are when this process last wrote its
	// row and, as coordinator, the rollout's fields: a change of counts
	// alone is written at most every countsEvery.
	rowWritten, statusWritten time.Time
}

// Promoted reports whether the resource of key is to run the kind's chart;
// on says it runs it already. Until the rollout was read, only those already
// on the chart are.
func (r *Runner) Promoted(key types.NamespacedName, on bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.promoted == nil {
		return on
	}
	p, known := r.promoted[key]
	if !known {
		return on // not counted yet: counted after its first status
	}
	return p
}

// Overrides returns the overrideValues the kind's revisions labeled with
// chart digest ran with, as the rollout of that chart recorded them; false
// when none did (revisions older than rollouts).
func (r *Runner) Overrides(ctx context.Context, digest string) (map[string]string, bool, error) {
	if digest == r.Digest {
		return r.OverrideValues, true, nil
	}
	u := New()
	if err := r.Reader.Get(ctx, client.ObjectKey{Name: Name(r.Kind, digest, r.Namespaces)}, u); apierrors.IsNotFound(err) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	cr, err := FromUnstructured(u)
	if err != nil {
		return nil, false, err
	}
	return cr.Spec.OverrideValues, true, nil
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: only the
// process reconciling the shard moves its share.
func (*Runner) NeedLeaderElection() bool { return true }

// Start moves the rollout until ctx ends.
func (r *Runner) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithValues("rollout", r.name())
	ctx = ctrl.LoggerInto(ctx, log)
	every := r.Every
	if every == 0 {
		every = time.Second
	}
	wait := every
	// Counts seen right after a start are of a fleet whose readiness is
	// still being read again: they wait countsEvery like any other.
	r.rowWritten = r.now()
	var last string // the error logged last, again at most once a minute
	var logged time.Time
	for {
		err := r.tick(ctx)
		switch {
		case err == nil:
			wait = every
		case ctx.Err() == nil:
			// A cluster without the ChartRollout kind, or rights to it,
			// is asked again ever less often, up to once a minute.
			wait = min(2*wait, time.Minute)
			if err.Error() != last || time.Since(logged) > time.Minute {
				last, logged = err.Error(), time.Now()
				log.Error(err, "Cannot move the chart rollout: resources not promoted keep the chart they run")
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

func (r *Runner) name() string { return Name(r.Kind, r.Digest, r.Namespaces) }

// coordinates reports whether this process moves the steps: the one that
// owns cluster-scoped objects.
func (r *Runner) coordinates() bool { return r.Shard.Owns("") }

// tick reads the rollout, counts this shard's share and writes it, then,
// in the coordinator, moves the rollout.
func (r *Runner) tick(ctx context.Context) error {
	cr, err := r.read(ctx)
	if err != nil || cr == nil {
		return err
	}
	fleet := r.Fleet.FleetVersion()
	if atRest(cr.Status.Phase) && r.counted.resourceVersion == cr.ResourceVersion && r.counted.fleet == fleet {
		return nil
	}
	now := r.now()
	members, complete, err := r.Fleet.Members(ctx)
	if err != nil || !complete {
		return err // an order of part of the fleet changes as the rest is counted
	}
	order(members)
	r.mu.Lock()
	if r.timers == nil || r.timers.generation != cr.Generation {
		r.timers = newTimers(cr.Generation)
	}
	v := view{policy: r.Policy, shard: r.Shard, target: r.Digest, phase: cr.Status.Phase, step: cr.Status.Step,
		created: cr.CreationTimestamp.Time, now: now}
	tl := v.count(members, r.timers)
	tl.status.Generation = cr.Generation
	changed := r.changed(tl.promoted)
	r.promoted = tl.promoted
	row := tl.status
	r.mu.Unlock()
	r.Enqueue(ctx, changed)
	observe(r.Kind.Kind, cr)

	pending := false
	if mine := r.rowOf(cr); mine == nil || !equality.Semantic.DeepEqual(*mine, row) {
		if mine != nil && countsOnly(*mine, row) && now.Sub(r.rowWritten) < countsEvery {
			pending = true
		} else {
			if err := r.writeRow(ctx, cr, row); err != nil {
				return err
			}
			r.rowWritten = now
			setRow(cr, row)
		}
	}
	if r.coordinates() {
		held, err := r.coordinate(ctx, cr, now)
		if err != nil {
			return err
		}
		pending = pending || held
	}
	if !pending {
		r.counted.resourceVersion, r.counted.fleet = cr.ResourceVersion, fleet
	}
	return nil
}

// countsEvery is how often a change of a rollout's counts alone (total,
// updated, Ready) is written: each write is an API request, and every
// resource's upgrade changes them.
const countsEvery = 10 * time.Second

// countsOnly reports whether rows a and b differ in their counts of
// resources alone, which wait for countsEvery.
func countsOnly(a, b ShardStatus) bool {
	a.Total, a.Updated, a.Ready = 0, 0, 0
	b.Total, b.Updated, b.Ready = 0, 0, 0
	return equality.Semantic.DeepEqual(a, b)
}

// atRest reports whether a rollout in phase moves no resource but those the
// fleet's changes move: no timer of a step runs.
func atRest(phase string) bool {
	switch phase {
	case PhaseComplete, PhaseSuperseded, PhaseUndone, PhaseHalted, PhasePaused:
		return true
	}
	return false
}

// changed returns the keys whose promotion differs in next from now.
func (r *Runner) changed(next map[types.NamespacedName]bool) []types.NamespacedName {
	var out []types.NamespacedName
	for key, p := range next {
		if was, known := r.promoted[key]; !known && p || known && was != p {
			out = append(out, key)
		}
	}
	return out
}

// read returns the kind's rollout of its chart, which the coordinator
// creates when there is none; nil while there is none.
func (r *Runner) read(ctx context.Context) (*ChartRollout, error) {
	u := New()
	err := r.Reader.Get(ctx, client.ObjectKey{Name: r.name()}, u)
	switch {
	case apierrors.IsNotFound(err) && r.coordinates():
		return r.create(ctx)
	case apierrors.IsNotFound(err):
		return nil, nil // the coordinator creates it
	case err != nil:
		return nil, err
	}
	cr, err := FromUnstructured(u)
	if err != nil || cr.Status.Phase != PhaseSuperseded {
		return cr, err
	}
	if r.coordinates() {
		return nil, r.restart(ctx, cr) // read again at the next tick
	}
	return nil, nil // the coordinator starts it again
}

// restart starts cr, superseded, over from its first step: the kind's chart
// came back to cr's after another. Its spec changes (startedAt), so that the
// shards count anew, and its status starts empty.
func (r *Runner) restart(ctx context.Context, cr *ChartRollout) error {
	u := New()
	u.SetName(cr.Name)
	patch := fmt.Appendf(nil, `{"spec":{"startedAt":%q,"paused":false,"undo":false}}`, r.now().UTC().Format(time.RFC3339))
	if err := r.Client.Patch(ctx, u, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("starting ChartRollout %s again: %w", cr.Name, err)
	}
	if err := r.applyCoordinator(ctx, cr, Status{}); err != nil {
		return err
	}
	if err := r.supersede(ctx); err != nil {
		return err
	}
	r.Events.Eventf(u, nil, corev1.EventTypeNormal, "Restarted", "Create",
		"Chart %s of kind %s is back: it rolls out again in steps %v", r.Chart, r.Kind.Kind, r.Policy.Steps)
	return nil
}

// create creates the kind's rollout of its chart at its first step, and
// marks every older rollout of the kind superseded.
func (r *Runner) create(ctx context.Context) (*ChartRollout, error) {
	cr := &ChartRollout{ObjectMeta: metav1.ObjectMeta{Name: r.name(),
		Labels: map[string]string{"app.kubernetes.io/managed-by": "rudder", LabelKind: LabelValue(r.Kind)}},
		Spec: Spec{Group: r.Kind.Group, Kind: r.Kind.Kind, Chart: r.Chart, ChartDigest: r.Digest, OverrideValues: r.OverrideValues,
			Namespaces: r.Namespaces}}
	u, err := ToUnstructured(cr)
	if err != nil {
		return nil, err
	}
	delete(u.Object, "status")
	if err := r.Client.Create(ctx, u); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, nil // read at the next tick
		}
		return nil, fmt.Errorf("creating ChartRollout %s: %w", cr.Name, err)
	}
	if err := r.supersede(ctx); err != nil {
		return nil, err
	}
	r.Events.Eventf(u, nil, corev1.EventTypeNormal, "Created", "Create",
		"Chart %s of kind %s rolls out in steps %v", r.Chart, r.Kind.Kind, r.Policy.Steps)
	return FromUnstructured(u)
}

// supersede marks the kind's other rollouts superseded: a resource they did
// not promote yet keeps its chart until this one promotes it.
func (r *Runner) supersede(ctx context.Context) error {
	list := NewList()
	if err := r.Reader.List(ctx, list, client.MatchingLabels{LabelKind: LabelValue(r.Kind)}); err != nil {
		return fmt.Errorf("listing the ChartRollouts of kind %s: %w", r.Kind.Kind, err)
	}
	for i := range list.Items {
		old, err := FromUnstructured(&list.Items[i])
		if err != nil || old.Spec.ChartDigest == r.Digest || old.Status.Phase == PhaseSuperseded ||
			!slices.Equal(slices.Sorted(slices.Values(old.Spec.Namespaces)), slices.Sorted(slices.Values(r.Namespaces))) {
			continue
		}
		old.Status.Phase = PhaseSuperseded
		if err := r.applyCoordinator(ctx, old, old.Status); err != nil {
			return err
		}
	}
	return nil
}

// coordinate moves cr from the shards' rows and writes what changed.
// It returns true when it held a change of counts alone back (countsEvery).
func (r *Runner) coordinate(ctx context.Context, cr *ChartRollout, now time.Time) (bool, error) {
	c := coordinator{policy: r.Policy, shards: max(r.Shard.Count, 1), now: now}
	next := c.next(cr)
	prev := cr.Status
	if equality.Semantic.DeepEqual(coordinatorFields(prev), coordinatorFields(withoutTimes(next, prev))) {
		return false, nil
	}
	if statusCountsOnly(prev, next) && now.Sub(r.statusWritten) < countsEvery {
		return true, nil
	}
	if err := r.applyCoordinator(ctx, cr, next); err != nil {
		return false, err
	}
	r.statusWritten = now
	r.announce(cr, prev, next)
	return false, nil
}

// statusCountsOnly reports whether a and b differ in their counts of
// resources alone, and the conditions' messages that quote them.
func statusCountsOnly(a, b Status) bool {
	strip := func(st Status) Status {
		st = coordinatorFields(st)
		st.Total, st.Updated, st.Ready = 0, 0, 0
		conds := make([]metav1.Condition, len(st.Conditions))
		for i, c := range st.Conditions {
			c.Message, c.LastTransitionTime = "", metav1.Time{}
			conds[i] = c
		}
		st.Conditions = conds
		return st
	}
	return equality.Semantic.DeepEqual(strip(a), strip(b))
}

// withoutTimes returns next with the conditions' transition times of prev
// where nothing else of them changed, so that they alone write nothing.
func withoutTimes(next, prev Status) Status {
	conds := make([]metav1.Condition, len(next.Conditions))
	for i, c := range next.Conditions {
		for _, p := range prev.Conditions {
			if p.Type == c.Type && p.Status == c.Status && p.Reason == c.Reason && p.Message == c.Message && p.ObservedGeneration == c.ObservedGeneration {
				c.LastTransitionTime = p.LastTransitionTime
			}
		}
		conds[i] = c
	}
	next.Conditions = conds
	return next
}

// announce records an event for each change of phase or step.
func (r *Runner) announce(cr *ChartRollout, prev, next Status) {
	u, err := ToUnstructured(cr)
	if err != nil {
		return
	}
	switch {
	case next.Phase != prev.Phase && next.Phase == PhaseHalted:
		msg := "halted"
		if c := meta.FindStatusCondition(next.Conditions, ConditionHalted); c != nil {
			msg = c.Message
		}
		r.Events.Eventf(u, nil, corev1.EventTypeWarning, "Halted", "Halt", "Chart %s: %s", r.Chart, msg)
	case next.Phase != prev.Phase && next.Phase != "":
		r.Events.Eventf(u, nil, corev1.EventTypeNormal, next.Phase, "Rollout", "Chart %s of kind %s: %s at step %s, %d of %d resources on it",
			r.Chart, r.Kind.Kind, next.Phase, next.StepText, next.Updated, next.Total)
	case next.Step != prev.Step && prev.Step != 0:
		r.Events.Eventf(u, nil, corev1.EventTypeNormal, "StepStarted", "Promote", "Step %s of chart %s: %d of %d resources on it",
			next.StepText, r.Chart, next.Updated, next.Total)
	}
}

func firstFailure(st Status) string {
	if len(st.FailedResources) == 0 {
		return "none listed"
	}
	f := st.FailedResources[0]
	return fmt.Sprintf("%s/%s, %s: %s", f.Namespace, f.Name, f.Reason, f.Message)
}

// rowOf returns this shard's row of cr; nil when it wrote none.
func (r *Runner) rowOf(cr *ChartRollout) *ShardStatus {
	for i := range cr.Status.Shards {
		if cr.Status.Shards[i].Shard == r.Shard.String() {
			return &cr.Status.Shards[i]
		}
	}
	return nil
}

func setRow(cr *ChartRollout, row ShardStatus) {
	for i := range cr.Status.Shards {
		if cr.Status.Shards[i].Shard == row.Shard {
			cr.Status.Shards[i] = row
			return
		}
	}
	cr.Status.Shards = append(cr.Status.Shards, row)
}

// writeRow applies this shard's row of cr's status.shards, as its own
// field manager: the other shards' rows and the coordinator's fields stay.
func (r *Runner) writeRow(ctx context.Context, cr *ChartRollout, row ShardStatus) error {
	m, err := toMap(&row)
	if err != nil {
		return err
	}
	return r.applyStatus(ctx, cr, shardFieldManager+r.Shard.String(), map[string]any{"shards": []any{m}})
}

// applyStatus applies st, the fields of cr's status manager owns, to it.
func (r *Runner) applyStatus(ctx context.Context, cr *ChartRollout, manager string, st map[string]any) error {
	u := New()
	u.SetName(cr.Name)
	u.Object["status"] = st
	if err := r.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(manager), client.ForceOwnership); err != nil {
		return fmt.Errorf("writing the status of ChartRollout %s: %w", cr.Name, err)
	}
	return nil
}

// applyCoordinator applies the coordinator's fields of st to cr's status.
func (r *Runner) applyCoordinator(ctx context.Context, cr *ChartRollout, st Status) error {
	m, err := toMap(ptr(coordinatorFields(st)))
	if err != nil {
		return err
	}
	return r.applyStatus(ctx, cr, FieldManager, m)
}

// coordinatorFields are the fields of st the coordinator owns: all but the
// shards' rows.
func coordinatorFields(st Status) Status {
	st.Shards = nil
	return st
}

// toMap converts v, a struct of this package, to its unstructured form.
func toMap(v any) (map[string]any, error) {
	return runtime.DefaultUnstructuredConverter.ToUnstructured(v)
}

func (r *Runner) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}
