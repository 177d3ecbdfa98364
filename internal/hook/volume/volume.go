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
// the database serves, on the smaller volume, while a claim grows.
func (h *Hook) Reconcile(ctx context.Context, obj *unstructured.Unstructured, values map[string]any) (hook.Result, error) {
	want, err := sizesOf(values)
	if err != nil {
		return hook.Result{}, err
	}
	data, err := h.size(ctx, obj, "data-"+obj.GetName()+"-0", "spec.storageSize", want.data, true)
	if err != nil {
		return hook.Result{}, err
	}
	worst := data
	// The backup hook makes the backup claim at the size the spec had then.
	if want.backup != nil {
		backups, err := h.size(ctx, obj, obj.GetName()+"-backup", "spec.backup.storageSize", *want.backup, false)
		if err != nil {
			return hook.Result{}, err
		}
		if backups.rank > worst.rank {
			worst = backups
		}
		if backups.reason != reasonNoClaim {
			worst.message = data.message + "; " + backups.message
		}
	}
	return hook.Result{
		Condition:     metav1.Condition{Status: worst.status, Reason: worst.reason, Message: worst.message},
		RequeueAfter:  worst.poll,
		BlocksRelease: data.foreign,
	}, nil
}

// sizes are the claim sizes a spec asks for.
type sizes struct {
	data   resource.Quantity  // spec.storageSize
	backup *resource.Quantity // spec.backup.storageSize; nil when unset
}

// sizesOf reads spec.storageSize, which must be set, and spec.backup.storageSize from values, each a positive
// quantity. A value missing, of the wrong type or not a positive quantity is a *hook.FieldError naming it.
func sizesOf(values map[string]any) (sizes, error) {
	data, found, err := hook.Quantity(values, "storageSize")
	switch {
	case err != nil:
		return sizes{}, err
	case !found:
		return sizes{}, &hook.FieldError{Field: "storageSize", Problem: `missing; set the size of the data volume, such as "1Gi"`}
	}
	s := sizes{data: data}
	backup, found, err := hook.Quantity(values, "backup", "storageSize")
	if err != nil {
		return sizes{}, err
	}
	if found {
		s.backup = &backup
	}
	return s, nil
}

const reasonNoClaim = "NoClaimYet"

// sizing is where one claim stands against the size its spec field asks;
// the higher its rank, the more it needs saying.
type sizing struct {
	rank    int
	status  metav1.ConditionStatus
	reason  string
	message string
	poll    time.Duration
	foreign bool // the claim is there and is not the resource's
}

// size expands claim name of obj to want, the size spec field field asks
// for, when it asks for less, and says where it stands. A claim that is not
// obj's is left alone: the backup claim must carry obj's
// hook.AnnotationGeneratedFor; a data claim of the release (release) may also
// be one its StatefulSet made, which is then recorded as obj's. A data claim
// that is there and is not obj's (kept from an earlier Database of the name)
// holds the release back: its StatefulSet would start on that data.
func (h *Hook) size(ctx context.Context, obj *unstructured.Unstructured, name, field string, want resource.Quantity, release bool) (sizing, error) {
	var claim corev1.PersistentVolumeClaim
	err := h.Reader.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}, &claim)
	if apierrors.IsNotFound(err) {
		return sizing{rank: 1, status: metav1.ConditionUnknown, reason: reasonNoClaim,
			message: fmt.Sprintf("Claim %s does not exist yet", name)}, nil
	}
	if err != nil {
		return sizing{}, fmt.Errorf("reading claim %s: %w", name, err)
	}
	owned := hook.IsGeneratedFor(obj, &claim)
	mark := release && hook.MadeByRelease(obj, &claim)
	if !mark && !owned {
		does := "does not resize it (" + field + ")"
		if release {
			does = "does not install or upgrade the release, whose StatefulSet would start on that data"
		}
		c := hook.NotOwned(obj, "PersistentVolumeClaim", name, does, true)
		return sizing{rank: 4, status: c.Status, reason: c.Reason, message: c.Message, poll: time.Minute, foreign: release}, nil
	}
	if mark || claim.Annotations[hook.AnnotationGeneratedFor] != hook.GeneratedFor(obj) { // recorded, or by name alone before
		patch := client.MergeFrom(claim.DeepCopy())
		metav1.SetMetaDataAnnotation(&claim.ObjectMeta, hook.AnnotationGeneratedFor, hook.GeneratedFor(obj))
		if err := hook.Acting(ctx, h.Client).Patch(ctx, &claim, patch); err != nil {
			return sizing{}, fmt.Errorf("recording claim %s as %s's: %w", name, hook.GeneratedFor(obj), err)
		}
	}

	requested := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	if want.Cmp(requested) > 0 {
		patch := client.MergeFrom(claim.DeepCopy())
		if claim.Spec.Resources.Requests == nil {
			claim.Spec.Resources.Requests = corev1.ResourceList{}
		}
		claim.Spec.Resources.Requests[corev1.ResourceStorage] = want
		err := hook.Acting(ctx, h.Client).Patch(ctx, &claim, patch)
		switch {
		case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
			return sizing{rank: 3, status: metav1.ConditionFalse, reason: "ExpansionRefused", poll: refusedPoll, message: fmt.Sprintf(
				"Claim %s cannot grow from %s to %s (%s): %s. The claim must be bound and its StorageClass must allow "+
					"volume expansion (allowVolumeExpansion: true)", name, requested.String(), want.String(), field, err.Error())}, nil
		case err != nil:
			return sizing{}, fmt.Errorf("expanding claim %s to %s: %w", name, want.String(), err)
		}
		requested = want
	}

	capacity := claim.Status.Capacity[corev1.ResourceStorage]
	if capacity.Cmp(requested) < 0 {
		msg := fmt.Sprintf("Claim %s is being expanded from %s to %s", name, capacity.String(), requested.String())
		for _, c := range claim.Status.Conditions {
			if c.Status == corev1.ConditionTrue && c.Message != "" {
				msg += " (" + string(c.Type) + ": " + c.Message + ")"
			}
		}
		return sizing{rank: 2, status: metav1.ConditionFalse, reason: "Resizing", message: msg, poll: resizePoll}, nil
	}
	return sizing{status: metav1.ConditionTrue, reason: "Sized",
		message: fmt.Sprintf("Claim %s has %s (%s %s)", name, capacity.String(), field, want.String())}, nil
}
