package reconcile_test

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/lease"
	"github.com/rudder-operator/rudder/internal/stored"
	"github.com/rudder-operator/rudder/test/testenv"
)

// An install holds the process's Lease: the holder a revision names has a
// Lease written no later than the revision, so another process reads it as
// alive while the revision is pending. (An unsharded process writes its Lease
// for actions only; none is written at start.)
func TestReconciler_ActionHoldsTheProcessLease(t *testing.T) {
	ns := namespace(t)
	if err := k8s.Create(ctx, testenv.NewObject(webappGVK, ns, "leased", webappSpec(1, "nginx:1.25"))); err != nil {
		t.Fatal(err)
	}
	var rev corev1.Secret
	testenv.Eventually(t, "revision 1 stored", func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sh.helm.release.v1.webapp-leased.v1"}, &rev)
	})
	holder := rev.Labels[stored.LabelHolder]
	if holder == "" {
		t.Fatalf("revision 1 has no %s label: %v", stored.LabelHolder, rev.Labels)
	}
	var held coordinationv1.Lease
	testenv.Eventually(t, "the holder's Lease", func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: "default", Name: lease.Name(holder)}, &held)
	})
	// The Secret's creation time has whole seconds only.
	if acquired := held.Spec.AcquireTime; acquired == nil || acquired.After(rev.CreationTimestamp.Add(time.Second)) {
		t.Errorf("Lease %s acquired at %v, after revision 1 was stored at %v", held.Name, acquired, rev.CreationTimestamp)
	}
	if h := held.Spec.HolderIdentity; h == nil || *h != holder {
		got := "none"
		if h != nil {
			got = *h
		}
		t.Errorf("Lease %s holder %s, want %s", held.Name, got, holder)
	}
}
