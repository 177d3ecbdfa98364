//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/rudder-operator/rudder/internal/shard"
)

// Issue 12: three shards of two managers each (leader election per shard)
// over nine namespaces, three of each shard's. Every WebApp is released by a
// manager of its namespace's shard, and no manager reconciles a resource of
// another shard. The leader of shard 0 is SIGKILLed before a wave; its
// standby does shard 0's part of it. Then four managers of four shards start while
// the three shards still run: they wait, naming them, until those stop, and
// then serve the namespaces as four shards, with no release left pending.
func TestShards_SplitFailOverAndReshard(t *testing.T) {
	t.Parallel() // its own operators over its own namespaces
	// The leader Leases live in a namespace of their own, made first so that
	// it is deleted last: managers that lose their Lease exit, and they must
	// run until the WebApps' namespaces are gone, to uninstall the releases.
	const leases = "shards-leases"
	privateNamespaces.Store(leases, true)
	createNamespaces(t, leases)
	var ops []*operator
	t.Cleanup(func() { // registered before the WebApps' namespaces: runs once they are gone
		for _, o := range ops {
			if o.cur != nil {
				_ = o.cur.stop(shutdownTimeout)
			}
		}
	})
	nss := namespacesOfShards(3, 3)
	for _, ns := range nss {
		privateNamespaces.Store(ns, true)
	}
	createNamespaces(t, nss...)
	// start starts replicas managers of each of count shards, at once.
	start := func(count, replicas int) []*operator {
		var started []*operator
		for i := range count {
			for r := range replicas {
				started = append(started, &operator{name: fmt.Sprintf("shards-%d-of-%d-%c", i, count, 'a'+r),
					env:  []string{"WATCH_NAMESPACE=" + strings.Join(nss, ","), fmt.Sprintf("RUDDER_SHARDS=%d", count), fmt.Sprintf("RUDDER_SHARD=%d", i)},
					args: []string{"--leader-elect", "--leader-election-namespace=" + leases}})
			}
		}
		ops = append(ops, started...)
		errs := make([]error, len(started))
		var wg sync.WaitGroup
		for i, o := range started {
			wg.Go(func() { errs[i] = o.start() })
		}
		wg.Wait()
		for i, o := range started {
			if errs[i] != nil {
				t.Fatalf("starting %s: %v", o.name, errs[i])
			}
			o.logOnFailure(t)
		}
		return started
	}
	three := start(3, 2)
	mode := regexp.MustCompile(`"mode": "(\w+)"`).FindStringSubmatch(three[0].cur.tail(1 << 20))
	if mode == nil {
		t.Fatalf("the manager logged no sharding mode:\n%s", three[0].cur.tail(40))
	}
	t.Logf("sharding mode: %s (the API server %s shard selectors)", mode[1], map[string]string{"server": "honors", "client": "ignores"}[mode[1]])

	var apps []*lcApp
	for _, ns := range nss {
		a := newApp(t, ns, "web")
		a.create(map[string]any{"image": "nginx:1.21", "replicas": 1, "port": 80})
		apps = append(apps, a)
	}
	for _, a := range apps {
		a.waitServing(1, "nginx:1.21", 1)
	}
	checkWrittenByShard(t, apps, three, 3)
	checkReconciledOwnOnly(t, three, 3)

	t.Log("the leader of shard 0 killed, then a wave: its standby does shard 0's part")
	leader := leaderOf(t, three[:2])
	leader.kill(t)
	killed := time.Now()
	for _, a := range apps {
		a.patch(`{"spec":{"image":"nginx:1.22"}}`)
	}
	for _, a := range apps {
		eventuallyWithin(t, 2*time.Minute, "WebApp "+a.ns+"/"+a.name+" on nginx:1.22", func() error { return a.convergedOn("nginx:1.22") })
	}
	t.Logf("the wave finished %s after the kill (the leader Lease lasts 15s)", time.Since(killed).Round(time.Second))
	live := slices.DeleteFunc(slices.Clone(three), func(o *operator) bool { return o == leader })
	checkWrittenByShard(t, apps, live, 3)

	t.Log("four shards start while three run: they wait")
	four := start(4, 1)
	time.Sleep(5 * time.Second)
	for _, o := range four {
		if log := o.cur.tail(1 << 20); !strings.Contains(log, "waiting for the managers of 3 shard(s) to stop") || strings.Contains(log, acquiredLease) {
			t.Errorf("%s: expected it to wait for the 3 shards and lead nothing; its log:\n%s", o.name, o.cur.tail(20))
		}
	}
	for _, o := range live {
		if err := o.cur.stop(shutdownTimeout); err != nil {
			t.Errorf("stopping %s: %v", o.name, err)
		}
	}
	stopped := time.Now()
	for _, o := range four {
		eventually(t, o.name+" leading its shard", func() error {
			if !strings.Contains(o.cur.tail(1<<20), acquiredLease) {
				return fmt.Errorf("no %q in its log", acquiredLease)
			}
			return nil
		})
	}
	t.Logf("the four shards lead %s after the three stopped", time.Since(stopped).Round(time.Second))
	for _, a := range apps {
		a.patch(`{"spec":{"image":"nginx:1.23"}}`)
	}
	for _, a := range apps {
		eventuallyWithin(t, 2*time.Minute, "WebApp "+a.ns+"/"+a.name+" on nginx:1.23", func() error { return a.convergedOn("nginx:1.23") })
	}
	checkWrittenByShard(t, apps, four, 4)
	checkReconciledOwnOnly(t, four, 4)
}

// namespacesOfShards returns per namespaces of each of count shards, with
// names that spread (FNV-1a's top bits follow a name's first characters).
func namespacesOfShards(count, per int) []string {
	var out []string
	got := make([]int, count)
	for n := 0; len(out) < count*per; n++ {
		ns := fmt.Sprintf("%c%d-shards", 'a'+n%26, n)
		if i := shard.Of(ns, count).Index; got[i] < per {
			got[i]++
			out = append(out, ns)
		}
	}
	return out
}

// holderOf returns the holder the manager of o logged at its start.
func holderOf(t *testing.T, o *operator) string {
	t.Helper()
	m := regexp.MustCompile(`"holder": "([^"]+)"`).FindStringSubmatch(o.cur.tail(1 << 20))
	if m == nil {
		t.Fatalf("%s logged no holder", o.name)
	}
	return m[1]
}

// shardOf returns the shard of count that operator o serves.
func shardOf(o *operator) int {
	for _, e := range o.env {
		if v, ok := strings.CutPrefix(e, "RUDDER_SHARD="); ok {
			i, _ := strconv.Atoi(v)
			return i
		}
	}
	return -1
}

// checkWrittenByShard checks that the newest revision of each app's release
// is deployed and was written by a manager of ops serving the shard of count
// that owns the app's namespace.
func checkWrittenByShard(t *testing.T, apps []*lcApp, ops []*operator, count int) {
	t.Helper()
	holders := map[string]int{}
	for _, o := range ops {
		holders[holderOf(t, o)] = shardOf(o)
	}
	for _, a := range apps {
		var list corev1.SecretList
		if _, err := getJSON(&list, "secrets", "-n", a.ns, "-l", "owner=helm,name="+a.release()); err != nil {
			t.Fatal(err)
		}
		newest := corev1.Secret{}
		for _, s := range list.Items {
			if n, _ := strconv.Atoi(s.Labels["version"]); n > 0 && n >= atoi(newest.Labels["version"]) {
				newest = s
			}
		}
		want := shard.Of(a.ns, count).Index
		holder := newest.Labels["rudder.dev/holder"]
		if got, ok := holders[holder]; !ok || got != want || newest.Labels["status"] != "deployed" {
			t.Errorf("release %s/%s: newest revision %s is %s, written by %q (shard %d, known %v); want deployed, by shard %d of %d",
				a.ns, a.release(), newest.Labels["version"], newest.Labels["status"], holder, got, ok, want, count)
		}
	}
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// checkReconciledOwnOnly checks that each manager of ops reconciled only
// resources of its shard's namespaces: each reconcile logs its planned step.
func checkReconciledOwnOnly(t *testing.T, ops []*operator, count int) {
	t.Helper()
	step := regexp.MustCompile(`Planned step.*"namespace": "([^"]+)"`)
	for _, o := range ops {
		b, err := os.ReadFile(o.cur.logPath)
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, m := range step.FindAllStringSubmatch(string(b), -1) {
			seen++
			if s := shard.Of(m[1], count).Index; s != shardOf(o) {
				t.Errorf("%s (shard %d of %d) reconciled a resource of namespace %s, shard %d's", o.name, shardOf(o), count, m[1], s)
				break
			}
		}
		t.Logf("%s: %d reconciles, all in its shard's namespaces", o.name, seen)
	}
}

// leaderOf returns the one of ops that leads.
func leaderOf(t *testing.T, ops []*operator) *operator {
	t.Helper()
	var leader *operator
	eventually(t, "one manager of the shard leading", func() error {
		for _, o := range ops {
			if strings.Contains(o.cur.tail(1<<20), acquiredLease) {
				leader = o
				return nil
			}
		}
		return fmt.Errorf("none of %d logged %q", len(ops), acquiredLease)
	})
	return leader
}
