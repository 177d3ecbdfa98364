package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// usage is what a column's measured processes have used so far: CPU-seconds
// and API requests by HTTP method. Figures are differences of two usages.
type usage struct {
	cpu      float64
	requests counts
	// profile is rudder's requests by step, verb and resource (scrape.profile).
	profile counts
}

func (u usage) sub(v usage) usage {
	return usage{cpu: u.cpu - v.cpu, requests: u.requests.sub(v.requests), profile: u.profile.sub(v.profile)}
}

// operator is an operator binary under measurement: started, stopped and
// restarted as a subprocess, its CPU and memory read from /proc, its API
// requests and Go heap from its metrics endpoint on a free loopback port.
// What earlier processes used is kept across restarts.
type operator struct {
	name string
	bin  string
	// args returns the flags for the given metrics and probe addresses.
	args func(metricsAddr, probeAddr string) []string
	// extraArgs are added to args from the next start on.
	extraArgs []string
	logDir    string

	proc        *process
	metricsAddr string
	starts      int

	mu sync.Mutex // guards the figures below, which the sampler updates
	// done is what exited processes used.
	done usage
	// peakRSS is VmHWM, peakAnon the most RssAnon sampled, peakHeap the
	// most Go heap in use sampled.
	peakRSS, peakAnon, peakHeap float64
	stopSampler                 chan struct{}
	samplerDone                 chan struct{}
}

// start starts the operator and waits until its /readyz answers 200.
func (o *operator) start(timeout time.Duration) error {
	metricsAddr, err := freeAddr()
	if err != nil {
		return err
	}
	probeAddr, err := freeAddr()
	if err != nil {
		return err
	}
	o.starts++
	logPath := filepath.Join(o.logDir, fmt.Sprintf("%s-%d.log", o.name, o.starts))
	p, err := startProcess(o.bin, append(o.args(metricsAddr, probeAddr), o.extraArgs...), nil, logPath)
	if err != nil {
		return err
	}
	o.proc, o.metricsAddr = p, metricsAddr
	if err := waitHTTP200(p, "http://"+probeAddr+"/readyz", timeout); err != nil {
		p.kill()
		return fmt.Errorf("%s: %w; its log: %s\n%s", o.name, err, logPath, p.tail())
	}
	o.stopSampler, o.samplerDone = make(chan struct{}), make(chan struct{})
	go o.sample()
	return nil
}

// samplePeriod is how often the operator's anonymous resident memory is read
// from /proc and its Go heap from its metrics endpoint. A scrape renders every metric (tens of kilobytes): once a second
// it would show in the operator's idle CPU, and so measure the bench itself.
const samplePeriod = 10 * time.Second

// sample records the peak RSS, anonymous RSS and Go heap every samplePeriod
// until stopped.
func (o *operator) sample() {
	defer close(o.samplerDone)
	tick := time.NewTicker(samplePeriod)
	defer tick.Stop()
	for {
		o.samplePeaks()
		select {
		case <-o.stopSampler:
			return
		case <-tick.C:
		}
	}
}

func (o *operator) samplePeaks() {
	rss, anon, _ := o.proc.memory()
	var heap float64
	if s, err := o.scrape(); err == nil {
		heap = s.heapBytes()
	}
	o.mu.Lock()
	o.peakRSS, o.peakAnon, o.peakHeap = max(o.peakRSS, rss), max(o.peakAnon, anon), max(o.peakHeap, heap)
	o.mu.Unlock()
}

// stop stops the operator with SIGTERM, keeping what it used.
func (o *operator) stop() error {
	close(o.stopSampler)
	<-o.samplerDone
	o.samplePeaks()
	// Requests are read just before SIGTERM; those of the shutdown itself are
	// not counted. CPU is read from the exited process's rusage.
	var requests, profile counts
	if s, err := o.scrape(); err == nil {
		requests, profile = s.requests(), s.profile()
	}
	err := o.proc.stop(time.Minute)
	o.mu.Lock()
	o.done = usage{cpu: o.done.cpu + o.proc.exitCPU(), requests: o.done.requests.add(requests), profile: o.done.profile.add(profile)}
	o.peakRSS = max(o.peakRSS, o.proc.exitMaxRSS())
	o.mu.Unlock()
	if err != nil {
		return fmt.Errorf("stopping %s: %w; its log: %s", o.name, err, o.proc.logPath)
	}
	return nil
}

// usage returns what every process of the operator has used so far.
func (o *operator) usage() (usage, error) {
	o.mu.Lock()
	u := usage{cpu: o.done.cpu, requests: counts{}.add(o.done.requests), profile: counts{}.add(o.done.profile)}
	o.mu.Unlock()
	if o.proc == nil || !o.proc.running() {
		return u, nil
	}
	cpu, err := o.proc.cpu()
	if err != nil {
		return u, fmt.Errorf("%s: %w", o.name, err)
	}
	s, err := o.scrape()
	if err != nil {
		return u, err
	}
	return usage{cpu: u.cpu + cpu, requests: u.requests.add(s.requests()), profile: u.profile.add(s.profile())}, nil
}

// peaks returns the peak RSS, anonymous RSS and Go heap of any of the
// operator's processes.
func (o *operator) peaks() memoryPeaks {
	o.mu.Lock()
	defer o.mu.Unlock()
	return memoryPeaks{RSS: o.peakRSS, Anon: o.peakAnon, Heap: o.peakHeap}
}

// memoryPeaks are the most memory the processes of a column or shard held,
// in bytes: resident (VmHWM), anonymous resident (RssAnon, sampled) and Go
// heap in use (sampled).
type memoryPeaks struct{ RSS, Anon, Heap float64 }

// scrape reads the running process's metrics endpoint.
func (o *operator) scrape() (scrape, error) {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + o.metricsAddr + "/metrics")
	if err != nil {
		return nil, fmt.Errorf("%s metrics: %w", o.name, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s metrics: %s", o.name, resp.Status)
	}
	return parseScrape(resp.Body)
}

// settleLimit bounds how long a restarted operator that reconciled every
// resource may take to go quiet.
const settleLimit = time.Minute

// waitSettled waits until a (re)started operator has settled: it reconciled
// at least n times, its work queues are empty, and it used under quietRate
// CPU-s per second over the last quiet interval. An operator that never goes
// quiet (the baseline reconciles every resource each minute, and its queue
// never empties at 1,000) counts as settled settleLimit after its n-th
// reconcile.
// It polls every second until then or until the context ends; it returns
// when settling began (the start of that quiet interval, or the limit).
func (o *operator) waitSettled(ctx context.Context, n int, quiet time.Duration, quietRate float64) (time.Time, error) {
	type sample struct {
		at  time.Time
		cpu float64
	}
	var window []sample
	var caughtUp time.Time // first seen with n reconciles
	last := "no sample yet"
	for {
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("%s did not settle: %s: %w", o.name, last, ctx.Err())
		case <-time.After(time.Second):
		}
		if !o.proc.running() {
			return time.Time{}, fmt.Errorf("%s exited: %w; its log: %s", o.name, o.proc.waitErr, o.proc.logPath)
		}
		cpu, err := o.proc.cpu()
		if err != nil {
			return time.Time{}, err
		}
		now := time.Now()
		window = append(window, sample{now, cpu})
		for len(window) > 1 && now.Sub(window[1].at) >= quiet {
			window = window[1:]
		}
		s, err := o.scrape()
		if err != nil {
			last = err.Error()
			continue
		}
		reconciles, depth := s.sum(metricReconciles), s.sum(metricQueueDepth)
		first := window[0]
		span := now.Sub(first.at)
		rate := (cpu - first.cpu) / max(span.Seconds(), 1e-9)
		last = fmt.Sprintf("%.0f/%d reconciles, queue depth %.0f, %.3f CPU-s/s over %s", reconciles, n, depth, rate, span.Round(time.Second))
		if reconciles < float64(n) {
			continue
		}
		if depth == 0 && span >= quiet && rate < quietRate {
			return first.at, nil
		}
		if caughtUp.IsZero() {
			caughtUp = now
		}
		if now.Sub(caughtUp) >= settleLimit {
			return now, nil
		}
	}
}

// waitHTTP200 polls url until it answers 200, failing early when p exits.
func waitHTTP200(p *process, url string, timeout time.Duration) error {
	c := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(timeout)
	last := "no answer"
	for time.Now().Before(deadline) {
		if !p.running() {
			return fmt.Errorf("exited before %s answered 200: %w", url, p.waitErr)
		}
		resp, err := c.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s did not answer 200 within %s: %s", url, timeout, last)
}

// freeAddr returns a loopback address with a port free right now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// rudderOperator is bin/manager with its default flags, but for loopback
// metrics and probe addresses and plain HTTP metrics: the benchmark scrapes
// every second and counts rudder's API requests, to which the default's
// review of each scrape (a TokenReview and a SubjectAccessReview, cached for
// minutes) would add requests the baseline, scraped over plain HTTP, does
// not make.
func rudderOperator(bin, logDir string) *operator {
	return &operator{name: columnRudder, bin: bin, logDir: logDir, args: func(metrics, probe string) []string {
		return []string{"--metrics-bind-address=" + metrics, "--metrics-secure=false", "--health-probe-bind-address=" + probe}
	}}
}

// baselineOperator is bin/baseline (test/bench/baseline).
func baselineOperator(bin, logDir string) *operator {
	return &operator{name: columnBaseline, bin: bin, logDir: logDir, args: func(metrics, probe string) []string {
		return []string{"--metrics-bind-address=" + metrics, "--health-probe-bind-address=" + probe}
	}}
}

// binary returns the path in env, or else bin/<name> under root; it fails
// when the file is missing.
func binary(env, root, name, makeTarget string) (string, error) {
	bin := os.Getenv(env)
	if bin == "" {
		bin = filepath.Join(root, "bin", name)
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("%s: %w; run `make %s`", bin, err, makeTarget)
	}
	return bin, nil
}
