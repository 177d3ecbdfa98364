package lease

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
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

// Lease is the Lease of one manager process. It is written only while the
// process runs Helm actions that may leave a revision pending (Hold): an idle
// process, or one that restarted with nothing to change, writes nothing. Run
// it (a manager.Runnable) to keep held Leases renewed; it is deleted when the
// process stops.
type Lease struct {
	Leases    coordinationv1client.LeasesGetter
	Namespace string
	Holder    string
	Duration  time.Duration // DefaultDuration when 0
	Renew     time.Duration // DefaultRenew when 0
	Clock     clock.Clock   // the real clock when nil

	mu      sync.Mutex
	holds   int       // actions in flight
	renewed time.Time // when this process last wrote its Lease; zero before
}

// Name returns the name of holder's Lease.
func Name(holder string) string {
	return "rudder-holder-" + strings.Trim(invalidNameChars.ReplaceAllString(strings.ToLower(holder), "-"), "-.")
}

var invalidNameChars = regexp.MustCompile(`[^a-z0-9.-]`)

// Acquire creates the process's Lease, renewed now. Hold does so when
// needed; Acquire is for a Lease that must exist before any action (the
// probe of sharded lists looks for it).
func (l *Lease) Acquire(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.create(ctx)
}

func (l *Lease) create(ctx context.Context) error {
	now := l.now()
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: Name(l.Holder), Namespace: l.Namespace, Labels: map[string]string{LabelHolderLease: "true"}},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(l.Holder),
			LeaseDurationSeconds: ptr.To(int32(l.duration().Seconds())),
			AcquireTime:          now,
			RenewTime:            now,
		},
	}
	if _, err := l.Leases.Leases(l.Namespace).Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating Lease %s/%s of this process: %w", l.Namespace, lease.Name, err)
	}
	l.renewed = now.Time
	return nil
}

// Hold keeps the Lease fresh until done is called: call it before a Helm
// action that may leave a revision pending, and done once the action has
// returned. A Lease older than the renew interval is renewed first, so that
// another process reads this one as alive for the whole action; when that
// renewal fails, so does Hold, and the action must not start.
func (l *Lease) Hold(ctx context.Context) (done func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stale() {
		if err := l.renewOnce(ctx); err != nil {
			return nil, fmt.Errorf("renewing Lease %s/%s of this process before a Helm action: %w", l.Namespace, Name(l.Holder), err)
		}
	}
	l.holds++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			l.holds--
			l.mu.Unlock()
		})
	}, nil
}

// stale reports whether the Lease was last written a renew interval ago or
// more, or never. Callers hold l.mu.
func (l *Lease) stale() bool {
	return l.renewed.IsZero() || l.clock().Since(l.renewed) >= l.renew()
}

// Start renews the Lease while actions hold it, deletes Leases that expired
// long ago, then deletes the process's own. It runs on every replica, leader
// or not, and stops after the controllers (the manager stops its other
// runnables last), so that no operation of this process is in flight once
// its Lease is gone.
func (l *Lease) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("lease")
	// Ticks are cheap (no request unless held and stale): a held Lease is
	// renewed at most a fifth of the renew interval late.
	tick := time.NewTicker(l.renew() / 5)
	defer tick.Stop()
	collected := l.clock().Now()
	for {
		select {
		case <-ctx.Done():
			l.release(log)
			return nil
		case <-tick.C:
			if err := l.renewHeld(ctx); err != nil {
				log.Error(err, "Cannot renew the Lease of this process", "lease", Name(l.Holder))
			}
			if l.clock().Since(collected) >= 30*l.renew() {
				collected = l.clock().Now()
				if err := l.collect(ctx); err != nil {
					log.Error(err, "Cannot delete expired Leases of rudder processes")
				}
			}
		}
	}
}

// renewHeld renews the Lease when an action holds it and it is stale.
func (l *Lease) renewHeld(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.holds == 0 || !l.stale() {
		return nil
	}
	return l.renewOnce(ctx)
}

// release deletes the process's Lease, with a context of its own: the
// manager's is done by then.
func (l *Lease) release(log logr.Logger) {
	l.mu.Lock()
	written := !l.renewed.IsZero()
	l.mu.Unlock()
	if !written {
		return // never written: nothing to delete
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.Leases.Leases(l.Namespace).Delete(ctx, Name(l.Holder), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		log.Error(err, "Cannot delete the Lease of this process; it expires unrenewed", "lease", Name(l.Holder))
	}
}

// NeedLeaderElection is false: standbys hold Leases too.
func (l *Lease) NeedLeaderElection() bool { return false }

// renewOnce writes the Lease, renewed now: created when this process has not
// written it yet or it was deleted by hand. Callers hold l.mu.
func (l *Lease) renewOnce(ctx context.Context) error {
	if l.renewed.IsZero() {
		if err := l.create(ctx); !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	leases := l.Leases.Leases(l.Namespace)
	lease, err := leases.Get(ctx, Name(l.Holder), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return l.create(ctx) // deleted by hand: this process still runs
	}
	if err != nil {
		return err
	}
	now := l.now()
	lease.Spec.RenewTime = now
	if _, err = leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		return err
	}
	l.renewed = now.Time
	return nil
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
