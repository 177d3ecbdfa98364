package lease

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/clock"
)

// Checker reads the Leases of rudder processes in one namespace.
type Checker struct {
	Leases    coordinationv1client.LeasesGetter
	Namespace string
	Clock     clock.PassiveClock // the real clock when nil
}

// Alive reports whether the process holder still runs: its Lease exists and
// was renewed within its duration. A process of a rudder too old to hold a
// Lease reads as gone.
func (c *Checker) Alive(ctx context.Context, holder string) (bool, error) {
	lease, err := c.Leases.Leases(c.Namespace).Get(ctx, Name(holder), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the Lease of rudder process %s: %w", holder, err)
	}
	now := clock.PassiveClock(clock.RealClock{})
	if c.Clock != nil {
		now = c.Clock
	}
	return expiredFor(lease, now.Now()) <= 0, nil
}
