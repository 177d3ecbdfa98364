//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
)

// leaderLease is the leader election Lease of rudder's managers.
const leaderLease = "rudder.rudder.dev"

// acquiredLease is what controller-runtime logs when a manager becomes leader.
const acquiredLease = "Successfully acquired lease"

// Issue 13, failover: two managers with leader election over one namespace.
// One leads and reconciles; the other stands by and reconciles nothing. A
// wave is under way when the leader is SIGKILLed: a new image on the first
// WebApps, and more WebApps created while no manager leads. The standby takes
// the Lease within 15 s of its expiry and finishes the wave, leaving no
// release pending.
func TestFailover_StandbyTakesOver(t *testing.T) {
	t.Parallel() // its own operators over its own namespace
	const ns, leases, before, after = "failover", "failover-leases", 10, 5
	// The Lease lives in a namespace deleted after the managers stop: in ns,
	// the namespace's deletion would delete it, and a manager that loses its
	// Lease exits before it has uninstalled the releases.
	privateNamespaces.Store(leases, true)
	createNamespaces(t, leases)
	args := []string{"--leader-elect", "--leader-election-namespace=" + leases}
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

	images := map[string]string{}
	var apps []*lcApp
	for i := range before {
		a := newApp(t, ns, fmt.Sprintf("fo-%02d", i))
		a.create(map[string]any{"image": "nginx:1.21", "replicas": 1, "port": 80})
		apps, images[a.name] = append(apps, a), "nginx:1.21"
	}
	eventually(t, "the leader's WebApps serving nginx:1.21", func() error { return waveConverged(ns, images) })
	if log := standby.cur.tail(1 << 20); strings.Contains(log, "Planned step") {
		t.Errorf("the standby reconciled while the other manager led")
	}

	// The wave: a new image on every WebApp; the leader dies once it has
	// upgraded the first; then more WebApps while no manager leads.
	for _, a := range apps {
		a.patch(`{"spec":{"image":"nginx:1.22"}}`)
		images[a.name] = "nginx:1.22"
	}
	apps[0].waitServing(2, "nginx:1.22", 1)
	lease := readLease(t, leases)
	leader.kill(t)
	killed := time.Now()
	t.Logf("leader killed; its last renewal %s, lease duration %ds", lease.Spec.RenewTime.Format(time.RFC3339Nano), *lease.Spec.LeaseDurationSeconds)
	for i := range after {
		a := newApp(t, ns, fmt.Sprintf("fo-new-%02d", i))
		a.create(map[string]any{"image": "nginx:1.22", "replicas": 1, "port": 80})
		images[a.name] = "nginx:1.22"
	}

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
	eventuallyWithin(t, 5*time.Minute, "the wave finished by the new leader, nothing pending", func() error { return waveConverged(ns, images) })
	t.Logf("the wave finished %s after the kill, %s after the Lease expired", time.Since(killed).Round(100*time.Millisecond),
		time.Since(expired).Round(100*time.Millisecond))
}

// waveConverged says how the WebApps of namespace ns differ from images (name
// to image): each Running at its generation on its image, its release's
// newest revision not pending. Three lists, not calls per WebApp, so that a
// poll sees the end of a wave within a second or so.
func waveConverged(ns string, images map[string]string) error {
	var apps struct{ Items []webApp }
	var deps appsv1.DeploymentList
	if _, err := getJSON(&apps, "webapps", "-n", ns); err != nil {
		return err
	}
	if _, err := getJSON(&deps, "deployments", "-n", ns); err != nil {
		return err
	}
	out, err := run("helm", "list", "-n", ns, "-o", "json") // Helm 4 lists every state by default
	if err != nil {
		return err
	}
	var releases []struct{ Name, Status string }
	if err := json.Unmarshal([]byte(out), &releases); err != nil {
		return fmt.Errorf("decoding helm list: %w", err)
	}
	running, deployed, settled := map[string]bool{}, map[string]string{}, map[string]bool{}
	for _, a := range apps.Items {
		running[a.Metadata.Name] = a.Status.Phase == "Running" && a.Status.ObservedGeneration == a.Metadata.Generation
	}
	for _, d := range deps.Items {
		deployed[d.Name] = d.Spec.Template.Spec.Containers[0].Image
	}
	for _, r := range releases {
		settled[r.Name] = !isPendingStatus(r.Status)
	}
	var behind []string
	for name, image := range images {
		if !running[name] || deployed[name] != image || !settled[releaseName(name)] {
			behind = append(behind, name)
		}
	}
	if len(behind) > 0 {
		sort.Strings(behind)
		return fmt.Errorf("%d of %d WebApps not yet Running on their image with their release settled: %s", len(behind), len(images), strings.Join(behind, ", "))
	}
	return nil
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
