// Command baseline is the benchmark's baseline operator: helm-operator-plugins
// v0.8.0's stock reconciler, set up with the options the operator-sdk hybrid
// scaffold's main.go passes (one watch, default annotations, dependent
// watches on, a one-minute reconcile period), serving rudder's embedded
// webapp chart for the kind WebApp of the group baseline.bench.rudder.dev,
// with WebApp's maxConcurrentReconciles from rudder's watches.yaml.
//
// It differs from the scaffold only where a benchmark needs it: the chart is
// the embedded one rather than a watches file on disk, and logs are JSON at
// level info, as rudder's are by default, instead of the scaffold's
// development (debug) logger, so that neither column pays for more logging.
//
// Its work queue is the plain rate-limited one that v0.8.0 was released with
// (controller-runtime v0.19), not the priority queue that rudder's newer
// controller-runtime turns on by default. With that queue the objects of a
// controller's initial list wait behind every other event, and a baseline kept
// busy by its own dependent watches never came back to them: a cold install
// waited for the bench's timeout.
// It must never import rudder's internal packages other than testenv, shard and
// watches.
package main
