package leader

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/hook"
)

const (
	// Name is how watches.yaml enables the hook.
	Name = "leader"
	// Condition is the condition type the hook owns.
	Condition = "Elected"
	// LabelLeader marks the pod that leads, with the value "true".
	LabelLeader = "rudder.dev/leader"

	// ReasonElected is the reason of Elected True: a pod leads.
	ReasonElected = "Elected"
	// ReasonNoReadyPod is the reason of Elected False when the selector matches
	// pods, none of which may lead.
	ReasonNoReadyPod = "NoReadyPod"
	// ReasonNoPods is the reason of Elected False when the selector matches no pod.
	ReasonNoPods = "NoPods"
)

// Hook keeps one leader among the pods a LeaderElection selects.
type Hook struct {
	// Client writes pods' labels and the Lease when the context carries no
	// acting client (hook.Acting).
	Client client.Client
	// Reader reads pods, nodes and the Lease from the API server: the choice
	// is made on what is, not on a cache that may lag.
	Reader client.Reader
	// Clock is the time source; the real clock when nil.
	Clock clock.PassiveClock
}

var _ hook.Hook = (*Hook)(nil)

// Name implements hook.Hook.
func (*Hook) Name() string { return Name }

// Condition implements hook.Hook.
func (*Hook) Condition() string { return Condition }

// Reconcile implements hook.Hook: it chooses the leader, takes the label off
// every other pod, records the leader in the Lease and labels it, then asks
// to run again when the Lease is due for renewal.
func (h *Hook) Reconcile(ctx context.Context, obj *unstructured.Unstructured, values map[string]any) (hook.Result, error) {
	s, err := specOf(values)
	if err != nil {
		return hook.Result{}, err
	}
	lease, err := h.lease(ctx, obj)
	if err != nil {
		return hook.Result{}, err
	}
	if lease != nil && !hook.Controls(obj, lease) {
		return hook.Result{BlocksReady: true, Condition: hook.NotOwned(obj, "Lease", obj.GetName(), "elects no leader", false)}, nil
	}
	holder := ""
	if lease != nil {
		holder = ptr.Deref(lease.Spec.HolderIdentity, "")
	}
	pods, err := h.gather(ctx, obj.GetNamespace(), s, holder)
	if err != nil {
		return hook.Result{}, err
	}
	d := Choose(holder, candidates(pods))
	c := hook.Acting(ctx, h.Client)
	for _, name := range d.Unlabel {
		if err := unlabel(ctx, c, pods[name]); err != nil {
			return hook.Result{}, err
		}
	}
	if d.Leader == "" {
		return h.noLeader(obj, lease, len(pods)), nil
	}
	if lease, err = h.record(ctx, c, obj, lease, d.Leader, s.leaseDuration); err != nil {
		return hook.Result{}, err
	}
	if err := label(ctx, c, pods[d.Leader]); err != nil {
		return hook.Result{}, err
	}
	since := lease.Spec.AcquireTime.UTC().Format(time.RFC3339)
	changes := ptr.Deref(lease.Spec.LeaseTransitions, 0)
	return hook.Result{
		BlocksReady:  true,
		RequeueAfter: renewEvery(s.leaseDuration),
		Status: map[string]any{"leader": d.Leader, "leaderSince": since, "leaderChanges": int64(changes),
			"leaderNode": pods[d.Leader].Spec.NodeName},
		Condition: metav1.Condition{Status: metav1.ConditionTrue, Reason: ReasonElected,
			Message: fmt.Sprintf("Pod %s leads since %s (Lease %s)", d.Leader, since, obj.GetName())},
	}, nil
}

// noLeader is the result when no pod may lead: every label is off and the
// Lease is no longer renewed, so that it expires for its readers.
func (h *Hook) noLeader(obj *unstructured.Unstructured, lease *coordinationv1.Lease, matched int) hook.Result {
	var changes int32
	if lease != nil {
		changes = ptr.Deref(lease.Spec.LeaseTransitions, 0)
	}
	res := hook.Result{
		BlocksReady: true,
		Status:      map[string]any{"leader": nil, "leaderSince": nil, "leaderNode": nil, "leaderChanges": int64(changes)},
		Condition: metav1.Condition{Status: metav1.ConditionFalse, Reason: ReasonNoReadyPod,
			Message: fmt.Sprintf("None of the %d pods spec.selector matches is Ready on a Ready node: no pod leads", matched)},
	}
	if matched == 0 {
		res.Condition.Reason = ReasonNoPods
		res.Condition.Message = fmt.Sprintf("spec.selector matches no pod in namespace %s: no pod leads", obj.GetNamespace())
	}
	return res
}

// Finalize implements hook.Hook: it takes the label off the pods and
// deletes the Lease, if the Lease is the resource's.
func (h *Hook) Finalize(ctx context.Context, obj *unstructured.Unstructured) error {
	lease, err := h.lease(ctx, obj)
	if err != nil || lease == nil || !hook.Controls(obj, lease) {
		return err
	}
	c := hook.Acting(ctx, h.Client)
	values, _, _ := unstructured.NestedMap(obj.Object, "spec")
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	if s, err := specOf(values); err == nil {
		pods, err := h.gather(ctx, obj.GetNamespace(), s, holder)
		if err != nil {
			return err
		}
		for _, p := range pods {
			if err := unlabel(ctx, c, p); err != nil {
				return err
			}
		}
	} else if holder != "" {
		var p corev1.Pod
		if err := h.Reader.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: holder}, &p); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("reading pod %s: %w", holder, err)
		} else if err == nil {
			if err := unlabel(ctx, c, &pod{Pod: p}); err != nil {
				return err
			}
		}
	}
	err = c.Delete(ctx, lease, client.Preconditions{UID: &lease.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Lease %s: %w", lease.Name, err)
	}
	return nil
}

func (h *Hook) now() time.Time {
	if h.Clock == nil {
		return time.Now()
	}
	return h.Clock.Now()
}
