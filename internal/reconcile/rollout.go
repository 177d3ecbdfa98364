package reconcile

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/rollout"
	"github.com/rudder-operator/rudder/internal/stored"
)

// Rollout is what the reconciler asks of a kind's chart rollout
// (rollout.Runner): whether a resource may run the kind's chart yet, and
// what an earlier chart ran with.
type Rollout interface {
	// Promoted reports whether the resource of key is to run the kind's
	// chart; on says it runs it already.
	Promoted(key types.NamespacedName, on bool) bool
	// Overrides returns the overrideValues the kind's revisions labeled
	// with chart digest ran with; false when no rollout recorded them.
	Overrides(ctx context.Context, digest string) (map[string]string, bool, error)
}

// chartFor returns the chart o's release is to run: the digest its
// revisions are labeled with, what loads it, and the overrideValues its
// values take. It is the kind's chart, unless the kind's rollout has not
// promoted the resource to it: a resource not promoted keeps the chart its
// deployed revision stores, and one taken back (undo, or a failure once the
// rollout halted) goes back to the chart of its newest revision on another
// chart. A resource with nothing deployed is installed with the kind's
// chart.
func (r *Reconciler) chartFor(ctx context.Context, o *observation) (string, func() (*helm.Chart, error), map[string]string, error) {
	d := o.Facts.Deployed
	if r.Rollout == nil || d == nil {
		return r.chartDigest, nil, r.Watch.OverrideValues, nil
	}
	on := plan.DigestsOf(d).Chart
	if r.Rollout.Promoted(o.key, on == r.chartDigest) {
		return r.chartDigest, nil, r.Watch.OverrideValues, nil
	}
	from := d
	if on == r.chartDigest {
		if from = priorChart(o.History, r.chartDigest); from == nil {
			return r.chartDigest, nil, r.Watch.OverrideValues, nil // installed with it: there is no chart to go back to
		}
	}
	digest, number := plan.DigestsOf(from).Chart, from.Number
	overrides, ok, err := r.Rollout.Overrides(ctx, digest)
	if err != nil {
		return "", nil, nil, fmt.Errorf("reading the overrideValues chart %s ran with: %w", digest, err)
	}
	if !ok {
		// A revision older than rollouts: its chart digest is of the chart
		// alone, made when the kind's overrideValues were the same as now,
		// or with nothing to tell them.
		overrides = r.Watch.OverrideValues
	}
	return digest, func() (*helm.Chart, error) {
		hc, err := r.helmFor(o)
		if err != nil {
			return nil, err
		}
		return hc.Chart(o.Release.Name, number)
	}, overrides, nil
}

// priorChart returns the newest signed revision of hist that served another
// chart than digest; nil when none did.
func priorChart(hist []stored.Revision, digest string) *stored.Revision {
	var prior *stored.Revision
	for i := range hist {
		rev := &hist[i]
		c := rev.Labels[stored.LabelChartDigest]
		if !rev.Signed || c == "" || c == digest || rev.Status != "deployed" && rev.Status != "superseded" {
			continue
		}
		if prior == nil || rev.Number > prior.Number {
			prior = rev
		}
	}
	return prior
}

// member is o's resource as the kind's rollout counts it, with ready its
// Ready condition just computed; skipped when the rollout is to leave it
// out: a resource paused, or whose values or account are invalid, cannot
// move.
func (r *Reconciler) member(o *observation, ready bool) *rollout.Member {
	f := o.Facts
	if f.Paused || f.Deleting || f.ValuesErr != nil || f.ActorErr != nil {
		return &rollout.Member{Key: o.key, Skip: true}
	}
	m := &rollout.Member{Key: o.key, Rank: rollout.Rank(o.Resource.GetUID()), Ready: ready,
		Canary: r.Watch.Rollout.Canaries.Matches(labels.Set(o.Resource.GetLabels()))}
	if d := f.Deployed; d != nil {
		m.Chart = plan.DigestsOf(d).Chart
		if at, err := strconv.ParseInt(d.Labels[stored.LabelWrittenAt], 10, 64); err == nil {
			m.Deployed = time.Unix(at, 0)
		} else {
			m.Deployed = d.Created
		}
		m.Installed = priorChart(o.History, m.Chart) == nil
	}
	fl, ok := r.memory.lastFailure(o.key)
	if !ok || fl.Want.Chart != r.chartDigest || fl.Count == 0 {
		return m
	}
	// The chart did not render (or its schema or rudder's scope refused
	// it) for the values the chart before it rendered: it is broken, which
	// the first try tells.
	m.Broken = f.Deployed != nil && fl.Want.Values == plan.DigestsOf(f.Deployed).Values && !stores(o.History, r.chartDigest)
	if m.Broken || fl.Count >= r.Watch.Remediation.MaxAttempts {
		msg := fl.Message
		if red := r.memory.secretsOf(o.key); red != nil {
			msg = red.String(msg)
		}
		if len(msg) > 1000 {
			msg = msg[:1000] + "…"
		}
		m.Failure = &rollout.Resource{Namespace: o.key.Namespace, Name: o.key.Name, Reason: fl.Reason, Message: msg}
	}
	return m
}

// stores reports whether a signed revision of hist was made with chart digest.
func stores(hist []stored.Revision, digest string) bool {
	for _, rev := range hist {
		if rev.Signed && rev.Labels[stored.LabelChartDigest] == digest {
			return true
		}
	}
	return false
}

// Members returns the resources of the kind this process reconciles, as the
// last status written for each counts them for the kind's rollout, and
// whether every resource of the kind in the cache was counted so: until then
// an order of them would change as the others are counted.
func (r *Reconciler) Members(ctx context.Context) ([]rollout.Member, bool, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(r.Watch.GVK.GroupVersion().WithKind(r.Watch.GVK.Kind + "List"))
	if err := r.Client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, false, err
	}
	r.memory.mu.Lock()
	defer r.memory.mu.Unlock()
	complete := true
	for i := range list.Items {
		obj := &list.Items[i]
		if !obj.GetDeletionTimestamp().IsZero() || !r.Watch.Selector.Matches(labels.Set(obj.GetLabels())) {
			continue
		}
		if e, ok := r.memory.m[keyOf(obj)]; !ok || e.member == nil {
			complete = false
			break
		}
	}
	out := make([]rollout.Member, 0, len(r.memory.m))
	for _, e := range r.memory.m {
		if e.member != nil && !e.member.Skip {
			out = append(out, *e.member)
		}
	}
	return out, complete, nil
}

// setMember records how the kind's rollout counts key's resource.
func (m *memory) setMember(key types.NamespacedName, member *rollout.Member) {
	m.update(key, func(e *entry) {
		if !sameMember(e.member, member) {
			m.members++ // under m.mu, which update holds
		}
		e.member = member
	})
}

// sameMember reports whether a and b count the same.
func sameMember(a, b *rollout.Member) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.Failure, y.Failure = nil, nil
	if x != y || (a.Failure == nil) != (b.Failure == nil) {
		return false
	}
	return a.Failure == nil || *a.Failure == *b.Failure
}

// FleetVersion changes whenever Members would return something else but for
// the cache's resources that were not counted yet.
func (r *Reconciler) FleetVersion() uint64 {
	r.memory.mu.Lock()
	defer r.memory.mu.Unlock()
	return r.memory.members
}

// Enqueue reconciles the resources of keys: those a rollout just promoted or
// took back. It returns early when ctx ends.
func (r *Reconciler) Enqueue(ctx context.Context, keys []types.NamespacedName) {
	for _, key := range keys {
		obj := r.newObject()
		obj.SetNamespace(key.Namespace)
		obj.SetName(key.Name)
		select {
		case r.promotions <- event.GenericEvent{Object: obj}:
		case <-ctx.Done():
			return
		}
	}
}
