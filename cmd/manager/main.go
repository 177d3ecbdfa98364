// Command manager runs rudder: one Helm release per custom resource of each
// kind its watches file lists.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/manager"
)

func main() {
	var opts manager.Options
	flag.StringVar(&opts.MetricsAddr, "metrics-bind-address", ":8080", `address of the metrics endpoint; "0" turns it off`)
	flag.StringVar(&opts.ProbeAddr, "health-probe-bind-address", ":8081", "address of the /healthz and /readyz endpoints")
	flag.StringVar(&opts.PprofAddr, "pprof-bind-address", "", `address of Go's profiles (/debug/pprof/), e.g. "127.0.0.1:6060"; empty: off`)
	qps := flag.Float64("kube-api-qps", 100, "requests per second each API client may send (client-side limit)")
	flag.IntVar(&opts.KubeAPIBurst, "kube-api-burst", 300, "requests each API client may send in a burst above --kube-api-qps")
	flag.BoolVar(&opts.LeaderElection, "leader-elect", false, "reconcile only while holding the leader lease (for several replicas)")
	flag.StringVar(&opts.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader lease (default: rudder's own, in a cluster)")
	flag.DurationVar(&opts.HolderLease, "holder-lease-duration", 15*time.Second, "how long this process's Lease lives unrenewed: how soon after a crash another rudder may unlock its pending operations")
	flag.StringVar(&opts.WatchesFile, "watches-file", "", "watches file on disk, charts relative to it (default: the embedded watches.yaml and charts)")
	flag.StringVar(&opts.LogLevel, "log-level", "info", "debug, info, error, or a verbosity number")
	flag.StringVar(&opts.LogFormat, "log-format", "json", "json or console")
	flag.Parse()
	opts.KubeAPIQPS = float32(*qps)
	if ns := os.Getenv("WATCH_NAMESPACE"); ns != "" {
		opts.Namespaces = strings.Split(ns, ",")
	}
	if err := manager.Run(ctrl.SetupSignalHandler(), opts); err != nil {
		fmt.Fprintln(os.Stderr, "rudder:", err)
		os.Exit(1)
	}
}
