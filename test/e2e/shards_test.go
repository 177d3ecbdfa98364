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

	dto "github.com/prometheus/client_model/go"

	"github.com/rudder-operator/rudder/internal/shard"
)

// Sizes of the shards test: RUDDER_E2E_SHARD_WEBAPPS WebApps in
// RUDDER_E2E_SHARD_NAMESPACES namespaces (a multiple of 3). make test runs
// the defaults, 9 in 9; the scale is 3000 in 60.
const (
	envShardWebApps    = "RUDDER_E2E_SHARD_WEBAPPS"
	envShardNamespaces = "RUDDER_E2E_SHARD_NAMESPACES"
)

// Issue 12: three shards of two managers each (leader election per shard)
// over namespaces split evenly among them. Every WebApp is released by a
// manager of its namespace's shard; no manager reconciles, or keeps in its
// reconciler, a resource of another shard. A wave starts and the leader of
// shard 0 is SIGKILLed: its standby does shard 0's part of the wave. Then
// four managers of four shards start while the three shards still run: they
// wait, naming them, until those stop, and then serve the namespaces as four
// shards, with no release left pending.
func TestShards_SplitFailOverAndReshard(t *testing.T) {
	t.Parallel() // its own operators over its own namespaces
	webApps, namespaces := envSize(t, envShardWebApps, 9), envSize(t, envShardNamespaces, 9)
	if namespaces%3 != 0 || webApps < namespaces {
		t.Fatalf("%s=%d, %s=%d: want a multiple of 3 namespaces, and at least one WebApp in each", envShardWebApps, webApps, envShardNamespaces, namespaces)
	}
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
	nss := namespacesOfShards(3, namespaces/3)
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
	t.Logf("sharding mode: %s (the API server %s shard selectors); %d WebApps in %d namespaces",
		mode[1], map[string]string{"server": "honors", "client": "ignores"}[mode[1]], webApps, namespaces)

	apps := newFleet(t, nss, webApps)
	apps.apply("nginx:1.21")
	apps.waitConverged("nginx:1.21")
	checkWrittenByShard(t, apps, three, 3)
	checkReconciledOwnOnly(t, three, 3)
	checkHeldOwnOnly(t, apps, three, 3, mode[1])

	t.Log("a wave, and the leader of shard 0 killed in it: its standby does shard 0's part")
	leader := leaderOf(t, three[:2])
	apps.apply("nginx:1.22")
	leader.kill(t)
	killed := time.Now()
	apps.waitConverged("nginx:1.22")
	t.Logf("the wave finished %s after the kill (the leader Lease lasts 15s)", time.Since(killed).Round(time.Second))
	live := slices.DeleteFunc(slices.Clone(three), func(o *operator) bool { return o == leader })
	// The killed leader is still shard 0's writer of what it upgraded
	// before its death; the standby wrote the rest.
	checkWrittenByShard(t, apps, three, 3)

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
	apps.apply("nginx:1.23")
	apps.waitConverged("nginx:1.23")
	checkWrittenByShard(t, apps, four, 4)
	checkReconciledOwnOnly(t, four, 4)
	checkHeldOwnOnly(t, apps, four, 4, mode[1])
}

// envSize reads a whole number of at least 1 from name; def when unset.
func envSize(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a whole number of at least 1", name, s)
	}
	return n
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

// checkWrittenByShard checks that the newest revision of each release of
// apps is deployed and was written by a manager of ops serving the shard of
// count that owns its namespace.
func checkWrittenByShard(t *testing.T, apps *fleet, ops []*operator, count int) {
	t.Helper()
	holders := map[string]int{}
	for _, o := range ops {
		holders[holderOf(t, o)] = shardOf(o)
	}
	revs, err := apps.newest()
	if err != nil {
		t.Fatal(err)
	}
	wrong, written := 0, map[string]int{}
	for ns, names := range apps.names {
		want := shard.Of(ns, count).Index
		for _, name := range names {
			r := revs[ns+"/"+releaseName(name)]
			written[r.holder]++
			if got, ok := holders[r.holder]; !ok || got != want || r.status != "deployed" {
				if wrong++; wrong <= 5 {
					t.Errorf("release %s/%s: newest revision %d is %q, written by %q (shard %d, known %v); want deployed, by shard %d of %d",
						ns, releaseName(name), r.version, r.status, r.holder, got, ok, want, count)
				}
			}
		}
	}
	if wrong > 5 {
		t.Errorf("and %d more releases like these", wrong-5)
	}
	for _, o := range ops {
		if n := written[holderOf(t, o)]; n > 0 {
			t.Logf("%s (shard %d of %d) wrote the newest revision of %d releases", o.name, shardOf(o), count, n)
		}
	}
}

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

// checkHeldOwnOnly checks, from the metrics of each leading manager of ops,
// that its reconciler holds the state of exactly the WebApps of its shard's
// namespaces, and, when the API server filters (mode server), that it was
// sent no object of another shard.
func checkHeldOwnOnly(t *testing.T, apps *fleet, ops []*operator, count int, mode string) {
	t.Helper()
	for _, o := range ops {
		if !strings.Contains(o.cur.tail(1<<20), acquiredLease) {
			continue // a standby holds nothing
		}
		s := shardOf(o)
		want := 0
		for ns, names := range apps.names {
			if shard.Of(ns, count).Index == s {
				want += len(names)
			}
		}
		families := scrape(t, o.cur.metricsAddr)
		held := 0
		for _, m := range families["rudder_release_state"].GetMetric() {
			labels := labelsOf(m)
			if labels["kind"] != "WebApp" {
				continue
			}
			held++
			if got := shard.Of(labels["namespace"], count).Index; got != s {
				t.Errorf("%s (shard %d of %d) holds the state of WebApp %s/%s, of shard %d", o.name, s, count, labels["namespace"], labels["name"], got)
			}
		}
		if held != want {
			t.Errorf("%s (shard %d of %d) holds the state of %d WebApps, want its shard's %d", o.name, s, count, held, want)
		}
		var own, others float64
		for _, m := range families["rudder_shard_objects_received_total"].GetMetric() {
			if labelsOf(m)["own"] == "true" {
				own += sampleValue(m)
			} else {
				others += sampleValue(m)
			}
		}
		if mode == "server" && others > 0 {
			t.Errorf("%s: the API server filters, yet sent it %v objects of other shards", o.name, others)
		}
		t.Logf("%s: holds %d WebApps (its shard's); received %.0f objects of its shard and %.0f of others (dropped)", o.name, held, own, others)
	}
}

func labelsOf(m *dto.Metric) map[string]string {
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	return labels
}
