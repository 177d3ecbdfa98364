package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/rudder-operator/rudder/test/bench/webappchart"
)

// The floor column's applier runs in a process of its own, the test binary
// started again with envFloorJob set (TestMain hands over to floorMain), so
// that its CPU and memory are measured from outside exactly as an operator's
// are, and the bench's own polling is not counted.
const envFloorJob = "RUDDER_BENCH_FLOOR_JOB"

// floorFieldOwner is the field manager of the floor's server-side applies.
const floorFieldOwner = "bench-floor"

// floorJob is one run of the floor's applier.
type floorJob struct {
	// Op is "apply" (render and server-side apply every WebApp's objects) or
	// "delete" (delete them).
	Op        string `json:"op"`
	Namespace string `json:"namespace"`
	// N WebApps named webAppName(0..N-1).
	N        int    `json:"n"`
	Image    string `json:"image"`
	Replicas int    `json:"replicas"`
	// Workers is how many goroutines apply or delete at once.
	Workers int `json:"workers"`
}

// floorReport is what an applier process prints on its last line of stdout.
type floorReport struct {
	// Requests are its API requests by HTTP method.
	Requests counts `json:"requests"`
	// PeakHeap is the most Go heap in use it saw and PeakAnonRSS the most
	// anonymous resident memory (RssAnon), both sampled every second.
	PeakHeap    float64 `json:"peakHeap"`
	PeakAnonRSS float64 `json:"peakAnonRSS"`
}

// floorMain is the applier process: it runs the job in envFloorJob and prints
// its report as JSON. It returns the exit code.
func floorMain() int {
	var job floorJob
	if err := json.Unmarshal([]byte(os.Getenv(envFloorJob)), &job); err != nil {
		fmt.Fprintf(os.Stderr, "bench-floor: reading %s: %v\n", envFloorJob, err)
		return 2
	}
	heap := startHeapSampler()
	requests, err := runFloorJob(context.Background(), job)
	peakHeap, peakAnon := heap.stop()
	report := floorReport{Requests: requests, PeakHeap: peakHeap, PeakAnonRSS: peakAnon}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench-floor: %s: %v\n", job.Op, err)
		return 1
	}
	out, _ := json.Marshal(report)
	fmt.Println(string(out))
	return 0
}

// runFloorJob renders the webapp chart for each WebApp and applies or deletes
// the objects with job.Workers goroutines. It returns the API requests made.
func runFloorJob(ctx context.Context, job floorJob) (counts, error) {
	cfg, err := ctrlconfig.GetConfig()
	if err != nil {
		return nil, err
	}
	counter := &requestCounter{}
	cfg.Wrap(counter.wrap)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, err
	}
	spec := webAppSpec(job.Image, job.Replicas)
	err = parallel(job.N, job.Workers, func(i int) error {
		// A chart of its own for each render, as an operator loads one for
		// each Helm action: Helm may change a chart while using it.
		chrt, err := webappchart.Load()
		if err != nil {
			return err
		}
		objs, err := renderWebApp(chrt, job.Namespace, webAppName(i), spec)
		if err != nil {
			return err
		}
		for _, obj := range objs {
			if err := floorOp(ctx, c, job.Op, obj); err != nil {
				return err
			}
		}
		return nil
	})
	return counter.counts(), err
}

// floorOp applies or deletes one rendered object.
func floorOp(ctx context.Context, c client.Client, op string, obj *unstructured.Unstructured) error {
	switch op {
	case "apply":
		err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(floorFieldOwner), client.ForceOwnership)
		if err != nil {
			return fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	case "delete":
		if err := client.IgnoreNotFound(c.Delete(ctx, obj, client.PropagationPolicy("Background"))); err != nil {
			return fmt.Errorf("deleting %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	default:
		return fmt.Errorf("unknown floor operation %q", op)
	}
	return nil
}

// requestCounter counts the HTTP requests of a client by method.
type requestCounter struct {
	mu sync.Mutex
	n  map[string]int64
}

func (rc *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		rc.mu.Lock()
		if rc.n == nil {
			rc.n = map[string]int64{}
		}
		rc.n[strings.ToUpper(req.Method)]++
		rc.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

func (rc *requestCounter) counts() counts {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := counts{}
	for k, v := range rc.n {
		out[k] = float64(v)
	}
	return out
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// heapSampler records the most Go heap in use and the most anonymous
// resident memory of this process.
type heapSampler struct {
	peak, peakAnon atomic.Uint64
	done           chan struct{}
	wg             sync.WaitGroup
}

func startHeapSampler() *heapSampler {
	h := &heapSampler{done: make(chan struct{})}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			h.sample()
			select {
			case <-h.done:
				return
			case <-tick.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	raise(&h.peak, ms.HeapInuse)
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		if anon, err := statusBytes(status, "RssAnon"); err == nil {
			raise(&h.peakAnon, uint64(anon))
		}
	}
}

// raise sets peak to v when v is more.
func raise(peak *atomic.Uint64, v uint64) {
	for {
		old := peak.Load()
		if v <= old || peak.CompareAndSwap(old, v) {
			return
		}
	}
}

// stop takes a last sample and returns the peak Go heap in use and the peak
// anonymous resident memory, in bytes.
func (h *heapSampler) stop() (heap, anon float64) {
	close(h.done)
	h.wg.Wait()
	h.sample()
	return float64(h.peak.Load()), float64(h.peakAnon.Load())
}

// floorRunner starts applier processes and adds up what they used.
type floorRunner struct {
	// totals of every finished applier process: CPU added up, peaks the
	// most of any of them.
	cpu      float64
	peaks    memoryPeaks
	requests counts
}

// run runs job in an applier process and waits for it.
func (f *floorRunner) run(ctx context.Context, job floorJob) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	spec, err := json.Marshal(job)
	if err != nil {
		return err
	}
	p, err := startProcess(self, []string{"-test.run=^$"}, []string{envFloorJob + "=" + string(spec)}, "")
	if err != nil {
		return err
	}
	select {
	case <-p.exited:
	case <-ctx.Done():
		p.kill()
		return ctx.Err()
	}
	f.cpu += p.exitCPU()
	f.peaks.RSS = max(f.peaks.RSS, p.exitMaxRSS())
	if p.waitErr != nil {
		return fmt.Errorf("floor %s: %w: %s", job.Op, p.waitErr, p.tail())
	}
	var report floorReport
	lines := strings.Split(strings.TrimSpace(p.stdout.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &report); err != nil {
		return fmt.Errorf("floor %s: reading its report: %w: %s", job.Op, err, p.tail())
	}
	f.peaks.Heap = max(f.peaks.Heap, report.PeakHeap)
	f.peaks.Anon = max(f.peaks.Anon, report.PeakAnonRSS)
	f.requests = f.requests.add(report.Requests)
	return nil
}

// usage is what the applier processes have used so far.
func (f *floorRunner) usage() usage {
	return usage{cpu: f.cpu, requests: counts{}.add(f.requests)}
}
