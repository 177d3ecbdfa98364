package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Environment of `make bench-memory`.
const (
	envMemoryWebApps    = "RUDDER_BENCH_MEMORY_WEBAPPS"
	envMemoryNamespaces = "RUDDER_BENCH_MEMORY_NAMESPACES"
)

// memoryConfig is what one memory run measures: N WebApps of one replica
// over Namespaces namespaces, installed in the steps Steps returns.
type memoryConfig struct {
	N, Namespaces int
	Image         string
	// Quiet is how long the manager must stay under 0.05 CPU-s per second
	// after a step before it is measured.
	Quiet time.Duration
}

func memoryConfigFromEnv() (memoryConfig, error) {
	cfg := memoryConfig{N: 10000, Namespaces: 10, Image: "nginx:1.25", Quiet: 10 * time.Second}
	var err error
	if cfg.N, err = envInt(envMemoryWebApps, cfg.N, 2); err != nil {
		return cfg, err
	}
	cfg.Namespaces, err = envInt(envMemoryNamespaces, cfg.Namespaces, 1)
	return cfg, err
}

// Steps are the numbers of WebApps installed at which the manager is
// measured: a tenth of N (1,000 of 10,000: the main bench's size), a
// quarter, a half and all of them; fewer when N is small.
func (c memoryConfig) Steps() []int {
	var steps []int
	for _, d := range []int{10, 4, 2, 1} {
		s := c.N / d
		if s > 0 && (len(steps) == 0 || s > steps[len(steps)-1]) {
			steps = append(steps, s)
		}
	}
	return steps
}

// memoryStep is the manager measured with n WebApps installed and Running
// and the manager quiet.
type memoryStep struct {
	WebApps int
	// Wall is how long this step's installs took, from its first create
	// until every WebApp was Running.
	Wall float64
	// RSS is VmRSS and PeakRSS VmHWM, both before the forced collection.
	RSS, PeakRSS float64
	// AnonRSS is RssAnon before the forced collection, and PeakAnonRSS the
	// most RssAnon sampled (every samplePeriod) since the manager started:
	// resident memory that no page-out of the binary's clean pages changes.
	AnonRSS, PeakAnonRSS float64
	// Live is the Go heap still allocated right after a forced collection:
	// what the manager holds. HeapInuse is the heap's spans in use then.
	Live, HeapInuse float64
	// Profile is the heap profile written at that collection.
	Profile string
}

// runMemoryBench starts one manager and installs cfg.N WebApps in
// cfg.Steps, measuring the manager after each. It returns the steps
// measured so far with the first error.
func runMemoryBench(ctx context.Context, cfg memoryConfig) (_ []memoryStep, err error) {
	run, err := setUpManagerRun(ctx, cfg.N, envMemoryWebApps, "bench-memory")
	if err != nil {
		return nil, err
	}
	defer run.done()
	c, bin, logDir := run.c, run.bin, run.logDir
	fmt.Fprintf(os.Stderr, "bench-memory: %d WebApps in %d namespaces, steps %v; log and heap profiles in %s\n",
		cfg.N, cfg.Namespaces, cfg.Steps(), logDir)
	nss, err := memoryNamespaces(ctx, c, cfg.Namespaces)
	if err != nil {
		return nil, err
	}
	op, pprofAddr, err := pprofOperator(bin, logDir)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, cleanUpMemory(ctx, c, op, nss)) }()
	if err := op.start(2 * time.Minute); err != nil {
		return nil, err
	}
	spec := map[string]any{"image": cfg.Image, "replicas": int64(1), "port": int64(80)}
	poll := max(pollPeriod, time.Duration(cfg.N/1000)*time.Second)
	var steps []memoryStep
	created := 0
	for _, n := range cfg.Steps() {
		wall, err := installStep(ctx, c, nss, created, n, spec, poll)
		if err != nil {
			return steps, err
		}
		created = n
		settleCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		_, err = op.waitSettled(settleCtx, n, cfg.Quiet, 0.05)
		cancel()
		if err != nil {
			return steps, err
		}
		s, err := measureMemory(op, pprofAddr, n, logDir)
		if err != nil {
			return steps, err
		}
		s.Wall = wall.Seconds()
		fmt.Fprintf(os.Stderr, "bench-memory: %d WebApps Running after %.1fs: RSS %.0f MiB (peak %.0f), anonymous RSS %.0f MiB (peak %.0f), live heap %.1f MB\n",
			n, s.Wall, s.RSS/mib, s.PeakRSS/mib, s.AnonRSS/mib, s.PeakAnonRSS/mib, s.Live/1e6)
		steps = append(steps, s)
	}
	return steps, nil
}

// memoryNamespaces creates n namespaces of a run's own: those of an earlier
// run may still be going.
func memoryNamespaces(ctx context.Context, c client.Client, n int) ([]string, error) {
	run := strconv.FormatInt(time.Now().Unix()%(36*36*36*36), 36)
	nss := make([]string, n)
	for i := range nss {
		nss[i] = fmt.Sprintf("mem-%s-%02d", run, i)
		if err := createNamespace(ctx, c, nss[i]); err != nil {
			return nil, err
		}
	}
	return nss, nil
}

// installStep creates WebApps from to n (spread over nss) and waits,
// polling every poll, until all n are Running; it returns how long that took.
func installStep(ctx context.Context, c client.Client, nss []string, from, n int, spec map[string]any, poll time.Duration) (time.Duration, error) {
	start := time.Now()
	if err := parallel(n-from, clientWorkers, func(i int) error {
		return c.Create(ctx, newWebApp(rudderWebApp, nss[(from+i)%len(nss)], from+i, spec))
	}); err != nil {
		return 0, fmt.Errorf("creating WebApps %d to %d: %w", from, n, err)
	}
	return waitForEvery(ctx, start, 5*time.Minute+time.Duration(n-from)*time.Second, poll,
		fmt.Sprintf("%d WebApps Running", n), func(ctx context.Context) (bool, string, error) { return allRunning(ctx, c, nss, n) })
}

// cleanUpMemory stops the manager and deletes the run's namespaces with
// their WebApps' finalizers removed, without waiting: nothing is measured
// after, and uninstalling 10,000 releases is not what this bench measures.
func cleanUpMemory(ctx context.Context, c client.Client, op *operator, nss []string) error {
	var errs []error
	if op.proc != nil && op.proc.running() {
		errs = append(errs, op.stop())
	}
	for _, ns := range nss {
		errs = append(errs, abandon(ctx, c, &column{gvk: &rudderWebApp}, ns))
	}
	return errors.Join(errs...)
}

// pprofOperator is bin/manager with its default flags and a pprof endpoint
// on a free loopback address, which it returns.
func pprofOperator(bin, logDir string) (*operator, string, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	o := rudderOperator(bin, logDir)
	args := o.args
	o.args = func(metrics, probe string) []string {
		return append(args(metrics, probe), "--pprof-bind-address="+addr)
	}
	return o, addr, nil
}

// measureMemory reads the manager's resident memory (with a last sample of
// its anonymous resident memory's peak), then has it collect its garbage
// while it writes a heap profile into dir, then reads its heap.
func measureMemory(op *operator, pprofAddr string, n int, dir string) (memoryStep, error) {
	s := memoryStep{WebApps: n}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", op.proc.pid()))
	if err != nil {
		return s, err
	}
	if s.RSS, err = statusBytes(status, "VmRSS"); err != nil {
		return s, err
	}
	if s.PeakRSS, err = statusBytes(status, "VmHWM"); err != nil {
		return s, err
	}
	if s.AnonRSS, err = statusBytes(status, "RssAnon"); err != nil {
		return s, err
	}
	op.samplePeaks()
	s.PeakAnonRSS = max(op.peaks().Anon, s.AnonRSS)
	s.Profile = filepath.Join(dir, fmt.Sprintf("heap-%05d.pb.gz", n))
	if err := saveURL("http://"+pprofAddr+"/debug/pprof/heap?gc=1", s.Profile); err != nil {
		return s, err
	}
	sc, err := op.scrape()
	if err != nil {
		return s, err
	}
	s.Live, s.HeapInuse = sc.sum(metricHeapAlloc), sc.sum(metricHeapInuse)
	return s, nil
}

// saveURL writes what url answers into path.
func saveURL(url, path string) error {
	c := &http.Client{Timeout: 2 * time.Minute}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
