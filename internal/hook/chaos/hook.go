package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/hook"
)

const (
	// Name is how watches.yaml enables the hook.
	Name = "podchaos"
	// Condition is the condition type the hook owns.
	Condition = "Recovered"
	// StatusKey is the .status key the hook owns.
	StatusKey = "chaos"
)

// Hook runs the rounds of a PodChaos.
type Hook struct {
	// Client writes pods when the reconcile carries no acting client
	// (hook.Acting): rudder acting as itself.
	Client client.Client
	// Reader reads the resource's schedule and its pods from the API server:
	// the cache may not show the last round yet, and pods are not cached.
	Reader client.Reader
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Shuffle picks pods at random; rand.Shuffle when nil.
	Shuffle func(n int, swap func(i, j int))
}

var (
	_ hook.Hook   = (*Hook)(nil)
	_ hook.Pauser = (*Hook)(nil)
)

// Name implements hook.Hook.
func (*Hook) Name() string { return Name }

// Condition implements hook.Hook.
func (*Hook) Condition() string { return Condition }

// Reconcile implements hook.Hook: it measures the recovery of the last round,
// acts on a round written ahead, or plans the round that is due and writes
// it ahead (the reconcile right after acts on it).
func (h *Hook) Reconcile(ctx context.Context, obj *unstructured.Unstructured, values map[string]any) (hook.Result, error) {
	s, err := parseSpec(values)
	if err != nil {
		return hook.Result{}, err
	}
	st, written, err := h.state(ctx, obj)
	if err != nil {
		return hook.Result{}, err
	}
	now := h.now()
	if st.Generation != obj.GetGeneration() || st.StartedAt == nil {
		st = st.restart(obj.GetGeneration(), now)
	}
	var pods corev1.PodList
	if err := h.Reader.List(ctx, &pods, client.InNamespace(obj.GetNamespace()), client.MatchingLabelsSelector{Selector: s.Selector}); err != nil {
		return hook.Result{}, fmt.Errorf("listing the selected pods: %w", err)
	}
	v := observe(pods.Items)
	st.track(s, v, now)
	switch {
	case st.Pending != nil:
		if err := h.act(ctx, obj, s, &st, v); err != nil {
			return hook.Result{}, err
		}
	case st.due(s, now):
		r := plan(s, &st, v, now, h.shuffle())
		st.advance(s, now)
		if len(r.Planned) > 0 {
			st.Pending = &r
		} else {
			st.record(r)
		}
	}
	if st.over(s, now) {
		st.NextRoundAt = nil
	}
	st.Phase, st.Message = st.phase(s, now)
	return result(st, written, s, now)
}

// act acts on the pending round's pods and records the round.
func (h *Hook) act(ctx context.Context, obj *unstructured.Unstructured, s Spec, st *State, v view) error {
	r := *st.Pending
	done, act := toAct(s, &r, v)
	r.Pods = done
	c := hook.Acting(ctx, h.Client)
	var budgets *pdbs
	if s.Action == ActionEvict {
		var err error
		if budgets, err = h.budgets(ctx, obj.GetNamespace()); err != nil {
			return err
		}
	}
	for _, ref := range act {
		if why := budgets.refuses(v.uids[ref.UID]); why != "" {
			r.Refused = append(r.Refused, why)
			continue
		}
		refused, err := do(ctx, c, s.Action, obj.GetNamespace(), ref)
		switch {
		case err != nil:
			return fmt.Errorf("round %d: %s pod %s: %w", r.Round, s.Action, ref.Name, err)
		case refused != "":
			r.Refused = append(r.Refused, refused)
		default:
			r.Pods = append(r.Pods, ref.Name)
			budgets.took(v.uids[ref.UID])
		}
	}
	if len(r.Pods) == 0 && len(r.Refused) == 0 {
		r.Skipped = "the pods chosen were no longer Ready, or no longer fit the budget"
	}
	st.Pending = nil
	st.record(r)
	return nil
}

// do kills or evicts the pod ref, by UID, so that a pod of the same name made
// since is left alone. A pod gone already counts as done; refused says why
// the API server would not (a PodDisruptionBudget, the acting account's
// rights): the round records it rather than trying again.
func do(ctx context.Context, c client.Client, action, ns string, ref PodRef) (refused string, err error) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ref.Name}}
	uid := ref.UID
	if action == ActionEvict {
		ctx, cancel := context.WithTimeout(ctx, evictTimeout)
		defer cancel()
		err = c.SubResource("eviction").Create(ctx, pod, &policyv1.Eviction{
			ObjectMeta:    metav1.ObjectMeta{Namespace: ns, Name: ref.Name},
			DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}},
		})
	} else {
		err = c.Delete(ctx, pod, client.Preconditions{UID: &uid})
	}
	switch {
	case err == nil, apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return "", nil
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return fmt.Sprintf("the eviction of pod %s was not granted within %s (%v): a PodDisruptionBudget allows no disruption now", ref.Name, evictTimeout, err), nil
	case apierrors.IsTooManyRequests(err):
		return fmt.Sprintf("the eviction of pod %s was refused: %v", ref.Name, err), nil
	case apierrors.IsForbidden(err):
		return fmt.Sprintf("pod %s: %v; grant the account rudder acts as what `rudder rbac PodChaos` prints", ref.Name, err), nil
	}
	return "", err
}

// state reads status.chaos from the API server, not from the cache, which may
// not show the round the last reconcile wrote; written are the keys it holds.
func (h *Hook) state(ctx context.Context, obj *unstructured.Unstructured) (st State, written map[string]any, err error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	if err := h.Reader.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		return State{}, nil, fmt.Errorf("reading the schedule of %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	written, _, _ = unstructured.NestedMap(live.Object, "status", StatusKey)
	return stateOf(live), written, nil
}

// stateOf decodes obj's status.chaos; a missing or unreadable one is a new schedule.
func stateOf(obj *unstructured.Unstructured) State {
	var st State
	if m, ok, _ := unstructured.NestedMap(obj.Object, "status", StatusKey); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &st); err != nil {
			return State{}
		}
	}
	return st
}

// result is the hook's answer for st, written over the keys written.
func result(st State, written map[string]any, s Spec, now time.Time) (hook.Result, error) {
	m, err := encode(st, written)
	if err != nil {
		return hook.Result{}, err
	}
	return hook.Result{Status: map[string]any{StatusKey: m}, Condition: st.condition(s), RequeueAfter: st.requeueAfter(now)}, nil
}

// encode returns st as status.chaos. A key the status holds (written, as the
// API server has it) that st no longer sets is null, so that rudder's merge
// patch of status removes it even when the resource it compares with (the
// cache's) does not show it yet: a round acted on does not stay pending.
func encode(st State, written map[string]any) (map[string]any, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&st)
	if err != nil {
		return nil, fmt.Errorf("encoding status.%s: %w", StatusKey, err)
	}
	for k := range written {
		if _, ok := m[k]; !ok {
			m[k] = nil
		}
	}
	return m, nil
}

// Paused implements hook.Pauser: while the resource is paused no round runs;
// the schedule says so and the condition stays as it was.
func (*Hook) Paused(obj *unstructured.Unstructured) hook.Result {
	st := stateOf(obj)
	written, _, _ := unstructured.NestedMap(obj.Object, "status", StatusKey)
	st.Phase = PhasePaused
	st.Message = fmt.Sprintf("No round runs while the annotation %s is \"true\"; remove it to resume the schedule", hook.AnnotationPaused)
	m, err := encode(st, written)
	if err != nil {
		return hook.Result{}
	}
	res := hook.Result{Status: map[string]any{StatusKey: m}}
	res.Condition = metav1.Condition{Status: metav1.ConditionUnknown, Reason: ReasonNoRoundYet, Message: "No round has acted on a pod yet"}
	if c := conditionOf(obj); c != nil {
		res.Condition = *c
	}
	return res
}

// Finalize implements hook.Hook: a deleted PodChaos acts no more, and leaves nothing behind.
func (*Hook) Finalize(context.Context, *unstructured.Unstructured) error { return nil }

func (h *Hook) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *Hook) shuffle() func(n int, swap func(i, j int)) {
	if h.Shuffle != nil {
		return h.Shuffle
	}
	return rand.Shuffle
}

// conditionOf returns obj's Recovered condition as last written, or nil.
func conditionOf(obj *unstructured.Unstructured) *metav1.Condition {
	list, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok || m["type"] != Condition {
			continue
		}
		var c metav1.Condition
		if runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c) == nil {
			return &c
		}
	}
	return nil
}
