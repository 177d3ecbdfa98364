package manager

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/rudder-operator/rudder/internal/shard"
)

// leaderLeaseName matches the leader Leases of every shard count: count 1 is
// "rudder.rudder.dev", count M "rudder-shard-<i>-of-<M>.rudder.dev".
var leaderLeaseName = regexp.MustCompile(`^rudder(?:-shard-\d+-of-(\d+))?\.rudder\.dev$`)

// reshardLock is the leader Lease of one shard that a manager takes and
// renews only while no manager of another shard count leads: during a change
// of the number of shards, the managers of the new count wait for those of
// the old one to stop (their Leases to be released or to expire), so that a
// namespace that moves between shards is never served by two managers at
// once. Should two counts lead at once all the same (they started within one
// renewal of each other), the one that acquired its Lease later gives up at
// its next renewal.
type reshardLock struct {
	resourcelock.Interface
	leases kubernetes.Interface
	ns     string
	count  int // this manager's shard count; 1 unsharded
	now    func() time.Time
}

// newReshardLock makes the leader Lease id in ns, held as identity, gated by
// the leader Leases of other shard counts.
func newReshardLock(cs kubernetes.Interface, s shard.Shard, ns, id, identity string) (*reshardLock, error) {
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, ns, id, cs.CoreV1(), cs.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: identity})
	if err != nil {
		return nil, err
	}
	return &reshardLock{Interface: lock, leases: cs, ns: ns, count: max(s.Count, 1), now: time.Now}, nil
}

// Create implements resourcelock.Interface.
func (l *reshardLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	if err := l.othersLead(ctx, ler); err != nil {
		return err
	}
	return l.Interface.Create(ctx, ler)
}

// Update implements resourcelock.Interface: a takeover and a renewal alike.
func (l *reshardLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	if err := l.othersLead(ctx, ler); err != nil {
		return err
	}
	return l.Interface.Update(ctx, ler)
}

// othersLead returns an error naming a live leader Lease of another shard
// count acquired no later than ler.
func (l *reshardLock) othersLead(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	list, err := l.leases.CoordinationV1().Leases(l.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing the leader Leases of other shard counts: %w", err)
	}
	for i := range list.Items {
		lease := &list.Items[i]
		m := leaderLeaseName.FindStringSubmatch(lease.Name)
		if m == nil || countOf(m[1]) == l.count || !live(lease, l.now()) {
			continue
		}
		if at := lease.Spec.AcquireTime; at == nil || !ler.AcquireTime.Time.Before(at.Time) {
			return fmt.Errorf("waiting for the managers of %d shard(s) to stop: Lease %s/%s is held by %s; "+
				"this manager serves %d shard(s)", countOf(m[1]), l.ns, lease.Name, *lease.Spec.HolderIdentity, l.count)
		}
	}
	return nil
}

func countOf(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 1 // rudder.rudder.dev: unsharded
	}
	return n
}

// live reports whether lease is held and was renewed within its duration.
func live(lease *coordinationv1.Lease, now time.Time) bool {
	sp := lease.Spec
	if sp.HolderIdentity == nil || *sp.HolderIdentity == "" || sp.RenewTime == nil || sp.LeaseDurationSeconds == nil {
		return false
	}
	return now.Before(sp.RenewTime.Add(time.Duration(*sp.LeaseDurationSeconds) * time.Second))
}
