// Package volume is the "volume" hook of the Database kind. A StatefulSet
// never changes the claims it made (its claim templates are immutable), so
// growing spec.storageSize would not grow the data; this hook expands the
// claim data-<name>-0 to spec.storageSize and reports how that goes.
package volume

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/hook"
)

const (
	// Name is how watches.yaml enables the hook.
	Name = "volume"
	// Condition is the condition type the hook owns: whether the data claim
	// has the size spec.storageSize asks for.
	Condition = "StorageSized"
	// resizePoll is how often a claim being expanded is looked at again.
	resizePoll = 30 * time.Second
	// refusedPoll is how often an expansion the cluster refused is tried
	// again (the StorageClass may be changed to allow it).
	refusedPoll = 5 * time.Minute
)

// Hook grows a Database's data claim to its spec.storageSize.
type Hook struct {
	// Client patches the claim.
	Client client.Client
	// Reader reads it from the API server.
	Reader client.Reader
}

var _ hook.Hook = (*Hook)(nil)

// Name implements hook.Hook.
func (*Hook) Name() string { return Name }

// Condition implements hook.Hook.
func (*Hook) Condition() string { return Condition }

// Finalize implements hook.Hook: the claim's fate is the backup hook's
// (spec.deletionPolicy).
func (*Hook) Finalize(context.Context, *unstructured.Unstructured) error { return nil }

// Reconcile implements hook.Hook. It never blocks the release or readiness:
// the database serves, on the smaller volume, while the claim grows.
func (h *Hook) Reconcile(ctx context.Context, obj *unstructured.Unstructured, values map[string]any) (hook.Result, error) {
	size, _, _ := unstructured.NestedString(values, "storageSize")
	want, err := resource.ParseQuantity(size)
	if err != nil {
		return hook.Result{}, fmt.Errorf("spec.storageSize %q is not a quantity: %w", size, err)
	}
	name := "data-" + obj.GetName() + "-0"
	var claim corev1.PersistentVolumeClaim
	err = h.Reader.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}, &claim)
	if apierrors.IsNotFound(err) {
		return result(metav1.ConditionUnknown, "NoClaimYet", fmt.Sprintf("The StatefulSet has not made claim %s yet", name), 0), nil
	}
	if err != nil {
		return hook.Result{}, fmt.Errorf("reading claim %s: %w", name, err)
	}

	requested := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	if want.Cmp(requested) > 0 {
		patch := client.MergeFrom(claim.DeepCopy())
		if claim.Spec.Resources.Requests == nil {
			claim.Spec.Resources.Requests = corev1.ResourceList{}
		}
		claim.Spec.Resources.Requests[corev1.ResourceStorage] = want
		err := h.Client.Patch(ctx, &claim, patch)
		switch {
		case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
			return result(metav1.ConditionFalse, "ExpansionRefused", fmt.Sprintf(
				"Claim %s cannot grow from %s to %s (spec.storageSize): %s. The claim must be bound and its StorageClass "+
					"must allow volume expansion (allowVolumeExpansion: true)", name, requested.String(), want.String(),
				err.Error()), refusedPoll), nil
		case err != nil:
			return hook.Result{}, fmt.Errorf("expanding claim %s to %s: %w", name, want.String(), err)
		}
		requested = want
	}

	capacity := claim.Status.Capacity[corev1.ResourceStorage]
	if capacity.Cmp(requested) < 0 {
		msg := fmt.Sprintf("Claim %s is being expanded from %s to %s", name, capacity.String(), requested.String())
		for _, c := range claim.Status.Conditions {
			if c.Status == corev1.ConditionTrue && c.Message != "" {
				msg += "; " + string(c.Type) + ": " + c.Message
			}
		}
		return result(metav1.ConditionFalse, "Resizing", msg, resizePoll), nil
	}
	return result(metav1.ConditionTrue, "Sized",
		fmt.Sprintf("Claim %s has %s (spec.storageSize %s)", name, capacity.String(), want.String()), 0), nil
}

func result(status metav1.ConditionStatus, reason, message string, poll time.Duration) hook.Result {
	return hook.Result{
		Condition:    metav1.Condition{Status: status, Reason: reason, Message: message},
		RequeueAfter: poll,
	}
}
