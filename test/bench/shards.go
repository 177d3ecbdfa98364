package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/shard"
)

// The sharded bench (`make bench-shards`): N WebApps spread over many
// namespaces, installed once under one manager and once under M shards of
// one manager each. It measures the time until every WebApp is Running, and
// per process its CPU, peak RSS and Go heap, and the objects its lists and
// watches received (rudder_shard_objects_received_total): its own, and the
// other shards' that it dropped. Which filtering mode the shards run in is
// the cluster's: the API server filters only with ShardedListAndWatch on.

// Environment of a sharded run.
const (
	envShardWebApps    = "RUDDER_BENCH_SHARD_WEBAPPS"
	envShardNamespaces = "RUDDER_BENCH_SHARD_NAMESPACES"
	envShards          = "RUDDER_BENCH_SHARDS"
)

// metricReceived counts what a manager's lists and watches received.
const metricReceived = "rudder_shard_objects_received_total"

// shardConfig is what one sharded run measures.
type shardConfig struct {
	// N WebApps of one replica over Namespaces namespaces; Shards in the
	// sharded column. Defaults 10000, 60, 3.
	N, Namespaces, Shards int
	Image                 string
}

func shardConfigFromEnv() (shardConfig, error) {
	cfg := shardConfig{N: 10000, Namespaces: 60, Shards: 3, Image: "nginx:1.25"}
	var err error
	if cfg.N, err = envInt(envShardWebApps, cfg.N, 1); err != nil {
		return cfg, err
	}
	if cfg.Namespaces, err = envInt(envShardNamespaces, cfg.Namespaces, 1); err != nil {
		return cfg, err
	}
	cfg.Shards, err = envInt(envShards, cfg.Shards, 2)
	return cfg, err
}

// pollEvery is how often a sharded run polls for Running WebApps: one list
// of all of them, which at 10,000 is tens of megabytes for the API server.
func (c shardConfig) pollEvery() time.Duration {
	return max(pollPeriod, time.Duration(c.N/1000)*time.Second)
}

// shardProcess is the figures of one manager process of a sharded run.
type shardProcess struct {
	Shard                  string // "all", or "i-of-M"
	Namespaces, WebApps    int
	CPU, PeakRSS, PeakHeap float64
	// Own and Others are the objects its lists and watches received: its
	// shard's, and the other shards' that it dropped.
	Own, Others float64
}

// shardResult is one column of a sharded run.
type shardResult struct {
	Name string
	// Mode is the shards' filtering mode, from their log: server or client
	// ("" unsharded).
	Mode string
	// Wall is from the first create until every WebApp is Running.
	Wall  float64
	Procs []shardProcess
}

// CPU is the CPU-seconds of all of the column's processes.
func (r *shardResult) CPU() float64 {
	var t float64
	for _, p := range r.Procs {
		t += p.CPU
	}
	return t
}

// shardNamespaces returns n namespace names for tag that shards of count
// split evenly (as evenly as n allows), as a platform team would choose them
// with `rudder shard-of`: FNV-1a leaves a few similar names in one shard.
func shardNamespaces(tag string, n, count int) []string {
	quota := (n + count - 1) / count
	var out []string
	got := make([]int, count)
	for i := 0; len(out) < n; i++ {
		ns := fmt.Sprintf("%c%02d-bench-%s", 'a'+i%26, i, tag)
		if s := shard.Of(ns, count).Index; got[s] < quota {
			got[s]++
			out = append(out, ns)
		}
	}
	return out
}

// runShardBench runs the unsharded column, then the sharded one, each in
// namespaces of its own that are deleted afterwards.
func runShardBench(ctx context.Context, cfg shardConfig) ([]*shardResult, error) {
	run, err := setUpManagerRun(ctx, cfg.N, envShardWebApps, "bench-shards")
	if err != nil {
		return nil, err
	}
	defer run.done()
	c, bin, logDir := run.c, run.bin, run.logDir
	fmt.Fprintf(os.Stderr, "bench-shards: %d WebApps in %d namespaces, 1 process then %d shards; logs in %s\n", cfg.N, cfg.Namespaces, cfg.Shards, logDir)
	var results []*shardResult
	for _, shards := range []int{1, cfg.Shards} {
		r, err := runShardColumn(ctx, c, cfg, bin, logDir, shards)
		if err != nil {
			return results, err
		}
		results = append(results, r)
	}
	return results, nil
}

// runShardColumn installs cfg.N WebApps under shards managers (1: one
// unsharded) and measures them until every WebApp is Running; then it stops
// the managers once the namespaces are gone.
func runShardColumn(ctx context.Context, c client.Client, cfg shardConfig, bin, logDir string, shards int) (_ *shardResult, err error) {
	r := &shardResult{Name: "1 process"}
	tag := "one"
	if shards > 1 {
		r.Name, tag = fmt.Sprintf("%d shards", shards), fmt.Sprintf("s%d", shards)
	}
	nss := shardNamespaces(tag, cfg.Namespaces, cfg.Shards)
	ops := make([]*operator, shards)
	for i := range ops {
		ops[i] = shardOperator(bin, logDir, shard.Shard{Index: i, Count: shards})
	}
	defer func() { err = errors.Join(err, cleanUpShardColumn(ctx, c, ops, nss, cfg.N)) }()
	for _, ns := range nss {
		if err := createNamespace(ctx, c, ns); err != nil {
			return nil, err
		}
	}
	for _, o := range ops {
		if err := o.start(2 * time.Minute); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	spec := map[string]any{"image": cfg.Image, "replicas": int64(1), "port": int64(80)}
	err = parallel(cfg.N, clientWorkers, func(i int) error {
		return c.Create(ctx, newWebApp(rudderWebApp, nss[i%len(nss)], i, spec))
	})
	if err != nil {
		return nil, fmt.Errorf("%s: creating WebApps: %w", r.Name, err)
	}
	fmt.Fprintf(os.Stderr, "bench-shards: %s: %d WebApps created in %.1fs\n", r.Name, cfg.N, time.Since(start).Seconds())
	wall, err := waitForEvery(ctx, start, 5*time.Minute+time.Duration(cfg.N)*300*time.Millisecond, cfg.pollEvery(),
		r.Name+": every WebApp Running", func(ctx context.Context) (bool, string, error) { return allRunning(ctx, c, nss, cfg.N) })
	if err != nil {
		return nil, err
	}
	r.Wall = wall.Seconds()
	fmt.Fprintf(os.Stderr, "bench-shards: %s: every WebApp Running after %.1fs\n", r.Name, r.Wall)
	for i, o := range ops {
		p, err := measureShard(o, shards, i, nss, cfg.N)
		if err != nil {
			return nil, err
		}
		r.Procs = append(r.Procs, p)
		if log, err := os.ReadFile(o.proc.logPath); err == nil {
			if m := modeInLog.FindSubmatch(log); m != nil {
				r.Mode = string(m[1])
			}
		}
	}
	return r, nil
}

// modeInLog finds the filtering mode a shard logs at its start (JSON, or
// the console encoder's).
var modeInLog = regexp.MustCompile(`"mode": ?"(\w+)"`)

// shardOperator is bin/manager serving shard s with loopback metrics and
// probe addresses; every namespace, no leader election.
func shardOperator(bin, logDir string, s shard.Shard) *operator {
	o := rudderOperator(bin, logDir)
	o.name = "rudder-shard-" + s.String()
	args := o.args
	o.args = func(metrics, probe string) []string {
		if !s.Sharded() {
			return args(metrics, probe)
		}
		return append(args(metrics, probe), fmt.Sprintf("--shards=%d", s.Count), fmt.Sprintf("--shard=%d", s.Index))
	}
	return o
}

// measureShard reads the figures of process i of shards, which serves its
// share of nss and of the n WebApps spread over them.
func measureShard(o *operator, shards, i int, nss []string, n int) (shardProcess, error) {
	s := shard.Shard{Index: i, Count: shards}
	p := shardProcess{Shard: s.String()}
	for j, ns := range nss {
		if s.Owns(ns) {
			p.Namespaces++
			p.WebApps += n/len(nss) + btoi(j < n%len(nss))
		}
	}
	u, err := o.usage()
	if err != nil {
		return p, err
	}
	o.samplePeaks()
	p.CPU = u.cpu
	pk := o.peaks()
	p.PeakRSS, p.PeakHeap = pk.RSS, pk.Heap
	sc, err := o.scrape()
	if err != nil {
		return p, err
	}
	received := sc.byLabel(metricReceived, "own")
	p.Own, p.Others = received["TRUE"], received["FALSE"]
	return p, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// allRunning reports whether the n WebApps of nss all report phase Running
// for their current generation: one cluster-wide list.
func allRunning(ctx context.Context, c client.Client, nss []string, n int) (bool, string, error) {
	ours := map[string]bool{}
	for _, ns := range nss {
		ours[ns] = true
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(rudderWebApp.GroupVersion().WithKind(rudderWebApp.Kind + "List"))
	if err := c.List(ctx, list); err != nil {
		return false, "", err
	}
	running := 0
	for _, u := range list.Items {
		phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		if ours[u.GetNamespace()] && phase == "Running" && observed == u.GetGeneration() {
			running++
		}
	}
	return running == n, fmt.Sprintf("%d/%d WebApps Running", running, n), nil
}

// cleanUpShardColumn stops the column's managers, then deletes its
// namespaces with their WebApps' finalizers removed (uninstalling 10,000
// releases is not what this bench measures) and waits until they are gone,
// so that the next column finds the cluster as this one did; n WebApps
// take n×150 ms more than 10 minutes at most.
func cleanUpShardColumn(ctx context.Context, c client.Client, ops []*operator, nss []string, n int) error {
	start := time.Now()
	var errs []error
	for _, o := range ops {
		if o.proc != nil && o.proc.running() {
			errs = append(errs, o.stop())
		}
	}
	for _, ns := range nss {
		errs = append(errs, abandon(ctx, c, &column{gvk: &rudderWebApp}, ns))
	}
	// The namespaces go together: the first takes about as long as all of
	// them (at 10,000 WebApps, more than 10 minutes on two cores).
	timeout := 10*time.Minute + time.Duration(n)*150*time.Millisecond
	for _, ns := range nss {
		errs = append(errs, deleteNamespaceWithin(ctx, c, ns, timeout))
	}
	fmt.Fprintf(os.Stderr, "bench-shards: %d namespaces deleted in %.1fs\n", len(nss), time.Since(start).Seconds())
	return errors.Join(errs...)
}
