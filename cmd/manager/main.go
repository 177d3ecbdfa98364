// Command manager runs rudder: one Helm release per custom resource of each
// kind its watches file lists.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/admission"
	"github.com/rudder-operator/rudder/internal/manager"
)

func main() {
	var opts manager.Options
	flag.StringVar(&opts.MetricsAddr, "metrics-bind-address", ":8443", `address of the metrics endpoint; "0" turns it off`)
	metricsSecure := flag.Bool("metrics-secure", true, "serve metrics over HTTPS to clients the API server authenticates and authorizes to get /metrics; false: plain HTTP to anyone, for local development")
	flag.StringVar(&opts.MetricsCertDir, "metrics-cert-path", "", "directory holding the metrics endpoint's tls.crt and tls.key (default: a self-signed certificate)")
	flag.StringVar(&opts.ProbeAddr, "health-probe-bind-address", ":8081", "address of the /healthz and /readyz endpoints")
	flag.StringVar(&opts.PprofAddr, "pprof-bind-address", "", `address of Go's profiles (/debug/pprof/), e.g. "127.0.0.1:6060"; empty: off`)
	qps := flag.Float64("kube-api-qps", 100, "requests per second each API client may send (client-side limit)")
	flag.IntVar(&opts.KubeAPIBurst, "kube-api-burst", 300, "requests each API client may send in a burst above --kube-api-qps")
	flag.BoolVar(&opts.LeaderElection, "leader-elect", false, "reconcile only while holding the leader lease (for several replicas)")
	flag.StringVar(&opts.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader lease (default: rudder's own, in a cluster)")
	flag.DurationVar(&opts.HolderLease, "holder-lease-duration", 15*time.Second, "how long this process's Lease lives unrenewed: how soon after a crash another rudder may unlock its pending operations")
	flag.StringVar(&opts.WatchesFile, "watches-file", "", "watches file on disk, charts relative to it (default: the embedded watches.yaml and charts)")
	flag.StringVar(&opts.LogLevel, "log-level", "info", "debug, info, error, or a verbosity number")
	flag.StringVar(&opts.LogLevel, "zap-log-level", "info", "the same as --log-level (operator-sdk's name)")
	flag.StringVar(&opts.LogFormat, "log-format", "json", "json (deployed) or console (development)")
	flag.IntVar(&opts.Shard.Count, "shards", envInt("RUDDER_SHARDS", 1), "number of shards the namespaces are split into, one manager (and its standbys) each; also $RUDDER_SHARDS")
	flag.IntVar(&opts.Shard.Index, "shard", envInt("RUDDER_SHARD", 0), "the shard this manager serves, 0 to --shards minus 1; also $RUDDER_SHARD")
	flag.StringVar(&opts.WatchLabelSelector, "watch-label-selector", "", "serve only the custom resources this label selector selects, e.g. team=payments (Flux's flag)")
	flag.StringVar(&opts.DefaultServiceAccount, "default-service-account", "", "act for each custom resource as this ServiceAccount of its namespace (impersonation), unless its annotation rudder.dev/service-account names another its Namespace allows (annotation rudder.dev/service-accounts); empty: rudder's own rights (docs/security.md)")
	flag.StringVar(&opts.RevisionKeySecret, "revision-key-secret", "", "Secret (NAMESPACE/NAME, or NAME in rudder's namespace) holding the key rudder signs its release revisions with; created when missing (default rudder-revision-key)")
	flag.BoolVar(&opts.NoCaches, "no-caches", false, "turn off rudder's own caches (the cluster's capabilities, decoded revisions), each only an optimisation, to rule one out; also $RUDDER_NO_CACHES=true")
	flag.BoolVar(&opts.AllowCrossNamespaceRefs, "allow-cross-namespace-refs", false, "let rudder.dev/depends-on name resources of other namespaces (default: refused, CrossNamespaceRef)")
	webhookMode := flag.String("webhook", "off", "admission webhook that refuses a spec whose chart does not render or whose objects the API server refuses: off; service (behind the Service of config/webhook); url (the manager writes its own configuration naming https://localhost:PORT, for a manager run next to the API server, as make run)")
	var webhookOpts admission.Options
	flag.IntVar(&webhookOpts.Port, "webhook-port", 9443, "port the admission webhook is served on")
	flag.DurationVar(&webhookOpts.Budget, "webhook-budget", admission.DefaultBudget, "longest an admission may render and dry-run; a longer one is allowed with a warning (the API server's timeout is this plus 2s)")
	flag.StringVar(&webhookOpts.ConfigurationName, "webhook-configuration", "rudder", "name of the ValidatingWebhookConfiguration whose CA bundle rudder keeps (and, in url mode, which it writes)")
	flag.StringVar(&webhookOpts.ServiceName, "webhook-service", "rudder-webhook", "Service of rudder's namespace in front of the webhook (service mode), which its certificate names")
	flag.StringVar(&webhookOpts.SecretName, "webhook-cert-secret", "rudder-webhook-cert", "Secret of rudder's namespace holding the webhook's CA and serving certificate, made and rotated by rudder")
	flag.BoolVar(&webhookOpts.NoCertRotation, "webhook-no-cert-rotation", false, "leave the webhook's certificate Secret and its configuration's CA bundle to another, such as cert-manager (config/certmanager)")
	flag.StringVar(&webhookOpts.CertDir, "webhook-cert-dir", "", "directory the webhook's certificate is written to from its Secret (default: a new temporary directory)")
	devel := flag.Bool("zap-devel", false, "development logs: console format, and debug level unless --log-level says otherwise (operator-sdk's flag)")
	flag.Parse()
	opts.KubeAPIQPS = float32(*qps)
	opts.MetricsInsecure = !*metricsSecure
	if *devel {
		opts.LogFormat = "console"
		if !flagSet("log-level") && !flagSet("zap-log-level") {
			opts.LogLevel = "debug"
		}
	}
	opts.Namespaces = namespaces(os.Getenv("WATCH_NAMESPACE"))
	mode, err := admission.ParseMode(*webhookMode)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rudder:", err)
		os.Exit(2)
	}
	if webhookOpts.Mode = mode; mode != admission.Off {
		opts.Webhook = webhookOpts.Setup
	}
	if err := manager.Run(ctrl.SetupSignalHandler(), opts); err != nil {
		fmt.Fprintln(os.Stderr, "rudder:", err)
		os.Exit(1)
	}
}

// namespaces reads WATCH_NAMESPACE: one name, several separated by commas
// (spaces and empty entries ignored, as OLM's olm.targetNamespaces may have
// them), or nothing for all namespaces.
func namespaces(env string) []string {
	var out []string
	for _, ns := range strings.Split(env, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}

// envInt reads the integer in environment variable name, or def when unset.
// A malformed value is reported and stops the program.
func envInt(name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		fmt.Fprintf(os.Stderr, "rudder: $%s=%q is not a whole number\n", name, v)
		os.Exit(2)
	}
	return n
}

// flagSet says whether the command line set flag name.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
