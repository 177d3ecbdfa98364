package manager

import (
	"os"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/internal/lease"
	"github.com/rudder-operator/rudder/internal/shard"
	"github.com/rudder-operator/rudder/internal/watches"

	"github.com/rudder-operator/rudder/internal/signature"
)

// Served is what a manager serves, for Options.Webhook.
type Served struct {
	// Watches are the kinds it serves and their charts.
	Watches []watches.Watch
	// Namespaces are those it watches; nil: all.
	Namespaces []string
	// Selector selects the custom resources it serves; nil: all.
	Selector labels.Selector
	// DefaultServiceAccount is Options.DefaultServiceAccount.
	DefaultServiceAccount string
	// Namespace is rudder's own: where its Leases and Secrets live.
	Namespace string
	// Config reaches the cluster as rudder.
	Config *rest.Config
	// Signatures tells the revisions rudder signed, as the reconciler does.
	Signatures *signature.Key
}

// Options configure a manager. The zero value of every field means its default.
type Options struct {
	// MetricsAddr is where Prometheus metrics are served (/metrics); "0"
	// turns them off. Default ":8443".
	MetricsAddr string
	// MetricsInsecure serves the metrics over plain HTTP to anyone who
	// reaches MetricsAddr, for local development. Default false: HTTPS, and
	// only to a client whose bearer token the API server authenticates
	// (TokenReview) and authorizes to get the non-resource URL /metrics
	// (SubjectAccessReview), with controller-runtime's filters; the metric
	// labels name every tenant's resources.
	MetricsInsecure bool
	// MetricsCertDir holds the metrics endpoint's serving certificate and
	// key, tls.crt and tls.key, reloaded when they change. Default "": a
	// self-signed certificate made at start.
	MetricsCertDir string
	// ProbeAddr is where /healthz and /readyz are served. Default ":8081".
	ProbeAddr string
	// PprofAddr is where Go's profiles are served (/debug/pprof/); default
	// "": not served. Bind it to a loopback address ("127.0.0.1:6060").
	PprofAddr string
	// KubeAPIQPS and KubeAPIBurst bound the requests per second each of
	// rudder's API clients sends (client-go's client-side rate limit; the API
	// server's priority and fairness still applies). Defaults 100 and 300:
	// client-go's own 20 and 30 made storage writes the bottleneck of a wave
	// of installs.
	KubeAPIQPS   float32
	KubeAPIBurst int
	// LeaderElection makes the manager reconcile only while it holds the
	// leader lease, so that several replicas can run. Default false.
	LeaderElection bool
	// LeaderElectionNamespace holds the lease; default: the namespace rudder
	// runs in (in a cluster), required outside one when LeaderElection is set.
	LeaderElectionNamespace string
	// HolderLease is how long this process's Lease (package lease) lives
	// unrenewed: how long after a crash its pending operations wait before
	// another process unlocks them. Renewed every third of it. Default 15s.
	HolderLease time.Duration
	// WatchesFile is a watches file on disk whose chart paths resolve against
	// its directory; default: the watches.yaml and charts embedded in the binary.
	WatchesFile string
	// Namespaces limits rudder to these namespaces (WATCH_NAMESPACE); default:
	// all namespaces.
	Namespaces []string
	// Shard makes this manager one of several, each owning the namespaces
	// of its hash range (package shard), with its own leader Lease. Default:
	// one shard owning every namespace.
	Shard shard.Shard
	// WatchLabelSelector limits rudder to the custom resources it selects
	// (Flux's --watch-label-selector), filtered by the API server. Default:
	// every resource.
	WatchLabelSelector string
	// AllowCrossNamespaceRefs lets a resource's references name another
	// namespace: the entries of its rudder.dev/depends-on annotation (Flux's
	// --no-cross-namespace-refs, reversed). Default false: such a reference
	// is refused (Released False, CrossNamespaceRef) and nothing of the other
	// namespace is read. A Database's spec.restore.from stays in its own
	// namespace whatever this says: a restore Job mounts the source's claim.
	AllowCrossNamespaceRefs bool
	// LogLevel is debug, info, error or a number of verbosity; default info.
	LogLevel string
	// LogFormat is json or console; default json.
	LogFormat string
	// GracefulShutdown bounds how long running reconciles may take to finish
	// after a stop signal. Default 30s.
	GracefulShutdown time.Duration
	// Hooks are added to the hooks built into rudder, for watches.yaml entries
	// to enable by name. Default: none.
	Hooks []hook.Hook
	// DefaultServiceAccount, when set, is the ServiceAccount of each custom
	// resource's namespace that rudder impersonates for everything it does on
	// that resource's behalf (lockdown: the API server's RBAC bounds it);
	// the annotation rudder.dev/service-account overrides it per resource.
	// Default "": rudder acts with its own rights for resources without the
	// annotation (docs/security.md).
	DefaultServiceAccount string
	// RevisionKeySecret is the Secret holding the key rudder signs its
	// release revisions with, "namespace/name" or a name in rudder's
	// namespace; created when missing. Default: rudder-revision-key in
	// rudder's namespace.
	RevisionKeySecret string
	// Webhook, when set, adds an admission webhook to the built manager
	// before it starts, given what the manager serves: package admission's,
	// which cmd/manager passes in (admission renders through package preview,
	// which imports this package). Default nil: no webhook.
	Webhook func(ctrl.Manager, Served) error
	// NoCaches turns off every cache of rudder's own, each only an
	// optimisation: the cluster's capabilities are read for every Helm
	// action, and each reconcile reads and decodes the revisions it needs
	// from storage. (The informers' caches of controller-runtime stay: they
	// are how rudder watches.) Default false; also set by the environment
	// variable RUDDER_NO_CACHES=true, as make test runs the integration
	// suite once.
	NoCaches bool
	// Config reaches the cluster; default: ctrl.GetConfig() (--kubeconfig,
	// $KUBECONFIG, in-cluster, ~/.kube/config).
	Config *rest.Config
}

func (o *Options) defaults() {
	if o.MetricsAddr == "" {
		o.MetricsAddr = ":8443"
	}
	if o.ProbeAddr == "" {
		o.ProbeAddr = ":8081"
	}
	if o.KubeAPIQPS == 0 {
		o.KubeAPIQPS = 100
	}
	if o.KubeAPIBurst == 0 {
		o.KubeAPIBurst = 300
	}
	if o.LogLevel == "" {
		o.LogLevel = "info"
	}
	if o.LogFormat == "" {
		o.LogFormat = "json"
	}
	if o.HolderLease == 0 {
		o.HolderLease = lease.DefaultDuration
	}
	if o.GracefulShutdown == 0 {
		o.GracefulShutdown = 30 * time.Second
	}
	if v, err := strconv.ParseBool(os.Getenv(EnvNoCaches)); err == nil && v {
		o.NoCaches = true
	}
}

// EnvNoCaches is the environment variable that sets Options.NoCaches.
const EnvNoCaches = "RUDDER_NO_CACHES"
