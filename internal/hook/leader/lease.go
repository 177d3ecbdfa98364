package leader

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/hook"
)

// lease reads the Lease named after obj; nil when there is none.
func (h *Hook) lease(ctx context.Context, obj *unstructured.Unstructured) (*coordinationv1.Lease, error) {
	var l coordinationv1.Lease
	err := h.Reader.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: obj.GetName()}, &l)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Lease %s: %w", obj.GetName(), err)
	}
	return &l, nil
}

// renewEvery is how often the leader's Lease is renewed: three times per
// duration, as client-go's leader election does, so that a reader sees it
// expire only when rudder stopped renewing it.
func renewEvery(d time.Duration) time.Duration { return d / 3 }

// record makes the Lease say that leader leads: a new holder gets a new
// acquireTime and counts one more transition; the same one is renewed when a
// third of the duration passed. It returns the Lease as written.
func (h *Hook) record(ctx context.Context, c client.Client, obj *unstructured.Unstructured, l *coordinationv1.Lease,
	leader string, d time.Duration) (*coordinationv1.Lease, error) {
	now := metav1.NewMicroTime(h.now())
	seconds := int32(max(d/time.Second, 1))
	if l == nil {
		l = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: obj.GetName(), Namespace: obj.GetNamespace(),
				OwnerReferences: []metav1.OwnerReference{hook.OwnerReference(obj)},
				Labels:          map[string]string{"app.kubernetes.io/managed-by": "rudder"}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &leader, LeaseDurationSeconds: &seconds,
				AcquireTime: &now, RenewTime: &now, LeaseTransitions: ptr.To[int32](0)},
		}
		if err := c.Create(ctx, l); err != nil {
			return nil, fmt.Errorf("creating Lease %s: %w", l.Name, err)
		}
		return l, nil
	}
	s := &l.Spec
	holder := ptr.Deref(s.HolderIdentity, "")
	due := s.RenewTime == nil || now.Sub(s.RenewTime.Time) >= renewEvery(d)*9/10
	if holder == leader && !due && ptr.Deref(s.LeaseDurationSeconds, 0) == seconds && s.AcquireTime != nil {
		return l, nil
	}
	l = l.DeepCopy()
	s = &l.Spec
	if holder != leader || s.AcquireTime == nil {
		if holder != "" && holder != leader {
			s.LeaseTransitions = ptr.To(ptr.Deref(s.LeaseTransitions, 0) + 1)
		}
		s.HolderIdentity, s.AcquireTime = &leader, &now
	}
	s.RenewTime, s.LeaseDurationSeconds = &now, &seconds
	if err := c.Update(ctx, l); err != nil { // resourceVersion: a conflict is retried with what is there
		return nil, fmt.Errorf("recording pod %s in Lease %s: %w", leader, l.Name, err)
	}
	return l, nil
}
