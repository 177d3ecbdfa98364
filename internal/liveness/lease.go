package liveness

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
)

// LabelHolderLease marks the Leases of rudder processes, so that expired
// ones are found and deleted.
const LabelHolderLease = "rudder.dev/holder-lease"

// Defaults of Lease: how long a Lease lives unrenewed, how often it is
// renewed, and how long after expiry another process deletes it.
const (
	DefaultDuration = 15 * time.Second
	DefaultRenew    = 5 * time.Second
	collectAfter    = time.Hour
)

// Lease is the Lease of one manager process. Acquire it before the process
// writes any revision, then run it (a manager.Runnable) to keep it renewed;
// it is deleted when the process stops.
type Lease struct {
	Leases    coordinationv1client.LeasesGetter
	Namespace string
	Holder    string
	Duration  time.Duration // DefaultDuration when 0
	Renew     time.Duration // DefaultRenew when 0
	Clock     clock.Clock   // the real clock when nil
}

// Name returns the name of holder's Lease.
func Name(holder string) string {
	return "rudder-holder-" + strings.Trim(invalidNameChars.ReplaceAllString(strings.ToLower(holder), "-"), "-.")
}

var invalidNameChars = regexp.MustCompile(`[^a-z0-9.-]`)

// Acquire creates the process's Lease, renewed now.
func (l *Lease) Acquire(ctx context.Context) error {
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: Name(l.Holder), Namespace: l.Namespace, Labels: map[string]string{LabelHolderLease: "true"}},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(l.Holder),
			LeaseDurationSeconds: ptr.To(int32(l.duration().Seconds())),
			AcquireTime:          l.now(),
			RenewTime:            l.now(),
		},
	}
	if _, err := l.Leases.Leases(l.Namespace).Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating Lease %s/%s of this process: %w", l.Namespace, lease.Name, err)
	}
	return nil
}

// Start renews the Lease until ctx ends, deletes Leases that expired long
// ago, then deletes the process's own. It runs on every replica, leader or
// not, and stops after the controllers (the manager stops its other
// runnables last), so that no operation of this process is in flight once
// its Lease is gone.
func (l *Lease) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("liveness")
	tick := time.NewTicker(l.renew())
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			l.release(log)
			return nil
		case <-tick.C:
			if err := l.renewOnce(ctx); err != nil {
				log.Error(err, "Cannot renew the Lease of this process", "lease", Name(l.Holder))
			}
			if n%30 == 0 {
				if err := l.collect(ctx); err != nil {
					log.Error(err, "Cannot delete expired Leases of rudder processes")
				}
			}
		}
	}
}

// release deletes the process's Lease, with a context of its own: the
// manager's is done by then.
func (l *Lease) release(log logr.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.Leases.Leases(l.Namespace).Delete(ctx, Name(l.Holder), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		log.Error(err, "Cannot delete the Lease of this process; it expires unrenewed", "lease", Name(l.Holder))
	}
}

// NeedLeaderElection is false: standbys hold Leases too.
func (l *Lease) NeedLeaderElection() bool { return false }

func (l *Lease) renewOnce(ctx context.Context) error {
	leases := l.Leases.Leases(l.Namespace)
	lease, err := leases.Get(ctx, Name(l.Holder), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return l.Acquire(ctx) // deleted by hand: this process still runs
	}
	if err != nil {
		return err
	}
	lease.Spec.RenewTime = l.now()
	_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	return err
}

// collect deletes the Leases of processes that stopped without deleting
// theirs (killed) more than an hour ago.
func (l *Lease) collect(ctx context.Context) error {
	leases := l.Leases.Leases(l.Namespace)
	list, err := leases.List(ctx, metav1.ListOptions{LabelSelector: LabelHolderLease + "=true"})
	if err != nil {
		return err
	}
	for i := range list.Items {
		if expiredFor(&list.Items[i], l.clock().Now()) > collectAfter {
			if err := leases.Delete(ctx, list.Items[i].Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	return nil
}

func (l *Lease) now() *metav1.MicroTime {
	t := metav1.NewMicroTime(l.clock().Now())
	return &t
}

func (l *Lease) clock() clock.Clock {
	if l.Clock == nil {
		return clock.RealClock{}
	}
	return l.Clock
}

func (l *Lease) duration() time.Duration {
	if l.Duration == 0 {
		return DefaultDuration
	}
	return l.Duration
}

func (l *Lease) renew() time.Duration {
	if l.Renew == 0 {
		return DefaultRenew
	}
	return l.Renew
}

// expiredFor returns how long ago lease expired; 0 or less while it is fresh.
func expiredFor(lease *coordinationv1.Lease, now time.Time) time.Duration {
	if lease.Spec.RenewTime == nil || lease.Spec.LeaseDurationSeconds == nil {
		return collectAfter + time.Second // malformed: as good as gone
	}
	return now.Sub(lease.Spec.RenewTime.Add(time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second))
}
