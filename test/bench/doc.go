// Package bench measures rudder against two other columns on the local
// cluster and prints one markdown table (`make bench`; docs/benchmarks.md):
//
//   - floor: the objects charts/webapp renders for each WebApp, applied by
//     server-side apply from as many goroutines as rudder runs WebApp
//     workers, with no operator. The applier is this test binary started
//     again as a subprocess (see floor.go), so its CPU and memory are measured
//     from outside like an operator's, and the bench's own polling is not.
//   - baseline: helm-operator-plugins v0.8.0's stock reconciler as the
//     operator-sdk hybrid scaffold sets it up (bin/baseline, test/bench/baseline),
//     serving the same chart for a WebApp kind in a group of its own, on the
//     work queue v0.8.0 was released with (no priority queue).
//   - rudder: bin/manager with its default flags.
//
// Each column runs in a fresh namespace, one column after the other, through
// six scenarios: cold install, idle then churn (pods deleted continuously),
// a change wave (a new image on every WebApp), a restart of the operator, a
// chart rollout (rudder only: rudder started again with the WebApp chart
// changed, rolled out in its default steps with no soak, until the
// ChartRollout is Complete; each step's time is from its status), and delete
// all. CPU is user plus system time of the measured process, from
// /proc/PID/stat while it runs and its rusage once it has exited; peak RSS is
// VmHWM (the kernel's high-water mark of resident memory, the binary's mapped
// pages included); peak anonymous RSS is the most RssAnon of
// /proc/PID/status sampled (every 10 s for an operator, every second inside
// the applier), resident memory that no page-out of the binary's clean pages
// changes and that has no kernel high-water mark; peak Go heap and API
// requests come from the operators' metrics endpoints
// (go_memstats_heap_inuse_bytes sampled every 10 s,
// rest_client_requests_total) and from the applier's own counting transport;
// rudder's drift comparisons (rudder_drift_comparisons_total), server-side
// dry runs that client-go counts as PATCH, are left out of the restart's
// writes and printed apart.
// On the local cluster (KUBECONFIG is bin/cluster/kubeconfig), the cold
// install and the change wave also count the CPU the control plane's
// processes used meanwhile (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok, by the pids hack/cluster-up.sh records), and the
// share of the machine's CPU time that was busy (/proc/stat): the work each
// column gave the control plane, and whether the cores were saturated.
// "Ready" is the same for every column: every Deployment rolled out with the
// wanted image and all replicas ready; for rudder also every WebApp Running.
// A restarted operator has settled once it reconciled every WebApp, its work
// queues are empty and it stayed under 0.05 CPU-s per second for 10 s (or,
// for an operator that never goes quiet, a minute after its N-th reconcile);
// its time is until that quiet interval began, its CPU until it was seen.
//
// `make bench-memory` (memory.go) measures one manager alone: it installs
// N WebApps of one replica (default 10,000) over 10 namespaces in four steps
// (a tenth, a quarter, half, all), and after each, once every WebApp is
// Running and the manager is quiet, reads VmRSS, VmHWM, RssAnon and the
// peak RssAnon sampled since the manager started, has the manager collect
// its garbage while it writes a heap profile (/debug/pprof/heap?gc=1; the
// manager runs with --pprof-bind-address), and reads the live heap
// (go_memstats_heap_alloc_bytes) right after. What the last step holds more
// than the first, divided by the WebApps between them, is the cost of each
// additional resource; its target is on the peak anonymous RSS.
//
// Targets are printed, never asserted. With the build tag e2e, TestBenchShort
// runs every column at 20 WebApps and asserts only that each scenario
// converged, and TestBenchMemoryShort measures 20 WebApps in four steps, so
// that neither benchmark can rot; `make test` runs them.
// It must never import rudder's internal packages other than testenv, shard and
// watches: it measures the built binaries.
package bench
