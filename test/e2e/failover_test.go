//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// leaderLease is the leader election Lease of rudder's managers.
const leaderLease = "rudder.rudder.dev"

// acquiredLease is what controller-runtime logs when a manager becomes leader.
const acquiredLease = "Successfully acquired lease"

// Issue 13, failover: two managers with leader election over one namespace.
// One leads and reconciles; the other stands by and reconciles nothing. A
// wave of installs is under way when the leader is SIGKILLed: the standby
// takes the Lease within 15 s of its expiry and finishes the wave, leaving
// no release pending.
func TestFailover_StandbyTakesOver(t *testing.T) {
	t.Parallel() // its own operators over its own namespace
	const ns, n = "failover", 10
	args := []string{"--leader-elect", "--leader-election-namespace=" + ns}
	first := privateOperator(t, ns, args...)
	second, err := startOperator(ns+"-standby", []string{ns}, args...)
	t.Cleanup(func() {
		if second.cur != nil {
			_ = second.cur.stop(shutdownTimeout)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	second.logOnFailure(t)
	var leader, standby *operator
	eventually(t, "one of the two managers to lead", func() error {
		switch {
		case strings.Contains(first.cur.tail(1<<20), acquiredLease):
			leader, standby = first, second
		case strings.Contains(second.cur.tail(1<<20), acquiredLease):
			leader, standby = second, first
		default:
			return fmt.Errorf("neither manager logged %q", acquiredLease)
		}
		return nil
	})
	t.Logf("operator %s leads (pid %d); %s stands by (pid %d)", leader.name, leader.cur.pid(), standby.name, standby.cur.pid())

	apps := make([]*lcApp, n)
	for i := range apps {
		apps[i] = newApp(t, ns, fmt.Sprintf("fo-%02d", i))
		apps[i].create(map[string]any{"image": "nginx:1.21", "replicas": 1, "port": 80})
	}
	apps[0].waitServing(1, "nginx:1.21", 1) // the wave is under way
	if log := standby.cur.tail(1 << 20); strings.Contains(log, "Planned step") {
		t.Errorf("the standby reconciled while the other manager led")
	}
	lease := readLease(t, ns)
	leader.kill(t)
	killed := time.Now()
	t.Logf("leader killed; its last renewal %s, lease duration %ds", lease.Spec.RenewTime.Format(time.RFC3339Nano), *lease.Spec.LeaseDurationSeconds)

	var took time.Time
	eventuallyWithin(t, time.Minute, "the standby to take the Lease", func() error {
		if !strings.Contains(standby.cur.tail(1<<20), acquiredLease) {
			return fmt.Errorf("the standby has not logged %q", acquiredLease)
		}
		took = time.Now()
		return nil
	})
	expired := lease.Spec.RenewTime.Add(time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second)
	t.Logf("the standby took over %s after the kill, %s after the Lease expired", took.Sub(killed).Round(100*time.Millisecond),
		took.Sub(expired).Round(100*time.Millisecond))
	// Polled every 200 ms: the measure is that late at most.
	if late := took.Sub(expired); late > 15*time.Second {
		t.Errorf("the standby took over %s after the Lease expired, want within 15s", late.Round(100*time.Millisecond))
	}
	eventuallyWithin(t, 5*time.Minute, "every WebApp installed by the new leader, nothing pending", func() error {
		for _, a := range apps {
			if err := a.convergedOn("nginx:1.21"); err != nil {
				return err
			}
		}
		return nil
	})
	t.Logf("the wave finished %s after the kill", time.Since(killed).Round(100*time.Millisecond))
}

// readLease reads the leader election Lease in namespace ns.
func readLease(t *testing.T, ns string) *coordinationv1.Lease {
	t.Helper()
	var l coordinationv1.Lease
	mustGetJSON(t, &l, "lease", leaderLease, "-n", ns)
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		t.Fatalf("Lease %s/%s has no renewTime or duration: %s", ns, leaderLease, toJSON(l.Spec))
	}
	return &l
}
