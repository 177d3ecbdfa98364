package manager

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/rudder-operator/rudder/internal/apicalls"
	"github.com/rudder-operator/rudder/internal/depends"
	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/identity"
	"github.com/rudder-operator/rudder/internal/lease"
	"github.com/rudder-operator/rudder/internal/owner"
	"github.com/rudder-operator/rudder/internal/reconcile"
	"github.com/rudder-operator/rudder/internal/signature"
	"github.com/rudder-operator/rudder/internal/stored"
	"github.com/rudder-operator/rudder/internal/valuesfrom"
	"github.com/rudder-operator/rudder/internal/watches"
)

// New builds a manager from opts, with one release reconciler per watched
// kind. It refuses watches that do not load, naming the entry and the field.
func New(opts Options, log logr.Logger) (ctrl.Manager, error) {
	opts.defaults()
	b := &builder{opts: opts, log: withoutBodies(log)}
	for _, step := range []func() error{
		b.readWatches,    // watches.yaml, and the hooks its kinds name
		b.connect,        // the cluster: its config, a clientset, the label selector
		b.holdLease,      // this process's Lease, the shard's informers, the leader lock
		b.newManager,     // controller-runtime's manager, its cache and metrics
		b.addCaches,      // release storage, the releases' objects, values-from sources
		b.newHelm,        // the revision key, Helm, whom to act as
		b.addReconcilers, // one release reconciler per kind, its hooks and events
		b.addWebhook,     // the admission webhook, when the command runs one
		b.addChecks,      // healthz and readyz
	} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return b.mgr, nil
}

// builder holds what New's steps make, each step from the earlier ones'.
type builder struct {
	opts Options
	log  logr.Logger

	ws       []watches.Watch
	metrics  metricsserver.Options
	cfg      *rest.Config
	cs       kubernetes.Interface
	selected labels.Selector

	holder      string
	lease       *lease.Lease
	newInformer newInformerFunc
	leaderLock  resourcelock.Interface // nil: controller-runtime's, unused without leader election

	mgr        ctrl.Manager
	store      cache.Cache
	dependents cache.Cache
	sources    cache.Cache

	signatures   *signature.Key
	helm         *helm.Getter
	impersonator *identity.Impersonator
}

func (b *builder) readWatches() (err error) {
	if b.ws, err = loadWatches(b.opts.WatchesFile); err != nil {
		return err
	}
	return checkHooks(b.ws, b.opts.Hooks)
}

func (b *builder) connect() (err error) {
	if b.metrics, err = metricsServer(b.opts, b.log); err != nil {
		return err
	}
	cfg := b.opts.Config
	if cfg == nil {
		if cfg, err = ctrl.GetConfig(); err != nil {
			return fmt.Errorf("finding the cluster: %w", err)
		}
	}
	b.cfg = rest.CopyConfig(cfg)
	b.cfg.QPS, b.cfg.Burst = b.opts.KubeAPIQPS, b.opts.KubeAPIBurst
	apicalls.Count(b.cfg)
	if err := b.opts.Shard.Check(); err != nil {
		return err
	}
	if b.selected, err = labelSelector(b.opts.WatchLabelSelector); err != nil {
		return err
	}
	b.cs, err = kubernetes.NewForConfig(b.cfg)
	return err
}

// holdLease makes this process's Lease, written while it runs Helm actions; a
// sharded process writes it first, as the probe of sharded lists looks for it.
func (b *builder) holdLease() (err error) {
	opts := b.opts
	b.holder = holderID()
	if b.lease, err = newLease(b.cs, leaseNamespace(opts), b.holder, opts.HolderLease, opts.Shard.Sharded()); err != nil {
		return err
	}
	b.log.Info("This process holds its Lease while it runs Helm actions: pending revisions labeled with its holder are left alone while it lives",
		"holder", b.holder, "lease", leaseNamespace(opts)+"/"+lease.Name(b.holder))
	if b.newInformer, err = shardInformers(b.cs, opts.Shard, leaseNamespace(opts), lease.Name(b.holder), b.log); err != nil {
		return err
	}
	if opts.LeaderElection {
		b.leaderLock, err = newReshardLock(b.cs, opts.Shard, leaseNamespace(opts), leaderElectionID(opts.Shard), b.holder)
	}
	return err
}

// cacheOptions gives o this shard's namespaces and informers: every cache
// holds only those (package shard).
func (b *builder) cacheOptions(o cache.Options) cache.Options {
	namespaces := map[string]cache.Config{}
	for _, ns := range b.opts.Namespaces {
		namespaces[ns] = cache.Config{}
	}
	o.DefaultNamespaces, o.NewInformer = namespaces, b.newInformer
	return o
}

func (b *builder) newManager() (err error) {
	opts := b.opts
	b.mgr, err = ctrl.NewManager(b.cfg, ctrl.Options{
		Scheme:                              scheme.Scheme,
		Logger:                              b.log,
		Metrics:                             b.metrics,
		HealthProbeBindAddress:              opts.ProbeAddr,
		PprofBindAddress:                    opts.PprofAddr,
		LeaderElection:                      opts.LeaderElection,
		LeaderElectionID:                    leaderElectionID(opts.Shard),
		LeaderElectionNamespace:             opts.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel:       true,
		LeaderElectionResourceLockInterface: b.leaderLock,
		GracefulShutdownTimeout:             &opts.GracefulShutdown,
		Cache:                               b.cacheOptions(resourceCache(b.ws, b.selected)),
		// Custom resources and the objects of releases are read as
		// unstructured objects; read them from the cache too.
		Client: client.Options{Cache: &client.CacheOptions{Unstructured: true}},
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	return nil
}

// addCaches adds the caches of release storage, of the releases' objects and
// of values-from sources, each started with the manager and warmed first.
func (b *builder) addCaches() (err error) {
	options := func() cache.Options {
		return b.cacheOptions(cache.Options{Scheme: b.mgr.GetScheme(), Mapper: b.mgr.GetRESTMapper(), HTTPClient: b.mgr.GetHTTPClient()})
	}
	if b.store, err = stored.NewCache(b.cfg, options()); err != nil {
		return err
	}
	if _, err := b.store.GetInformer(context.Background(), stored.Object(), cache.BlockUntilSynced(false)); err != nil {
		return fmt.Errorf("watching release storage: %w", err)
	}
	if b.dependents, err = owner.NewCache(b.cfg, options(), ownerKinds(b.ws)); err != nil {
		return err
	}
	if b.sources, err = valuesfrom.NewCache(b.cfg, options()); err != nil {
		return err
	}
	for _, c := range []cache.Cache{b.store, b.dependents, b.sources} {
		if err := b.mgr.Add(warmCache{c}); err != nil {
			return err
		}
	}
	return nil
}

// newHelm reads the key that signs revisions and makes the Helm clients and
// the impersonator that acts for each custom resource.
func (b *builder) newHelm() error {
	keyNamespace, keyName, err := revisionKeySecret(b.opts)
	if err != nil {
		return err
	}
	key, err := revisionKey(context.Background(), b.cs, keyNamespace, keyName)
	if err != nil {
		return err
	}
	b.signatures = signature.NewKey(key)
	helmOpts := []helm.GetterOption{helm.WithSigningKey(b.signatures)}
	if b.opts.NoCaches {
		helmOpts = append(helmOpts, helm.WithoutCaches())
	}
	if b.helm, err = helm.NewGetter(b.cfg, b.mgr.GetRESTMapper(), b.log.WithName("helm"), helmOpts...); err != nil {
		return err
	}
	b.impersonator = &identity.Impersonator{Config: b.cfg, Scheme: b.mgr.GetScheme(), Mapper: b.mgr.GetRESTMapper(),
		Default: b.opts.DefaultServiceAccount, Allowed: namespaceAccounts(b.mgr.GetCache())}
	if b.opts.DefaultServiceAccount != "" {
		b.log.Info("Acting for each custom resource as a ServiceAccount of its namespace", "serviceAccount", b.opts.DefaultServiceAccount)
	} else {
		b.log.Info("Acting with rudder's own rights for custom resources without the annotation " + identity.Annotation + " (docs/security.md)")
	}
	return nil
}

func (b *builder) addReconcilers() error {
	registry, err := builtinHooks(b.mgr, b.opts.Hooks)
	if err != nil {
		return err
	}
	recorder, err := newRecorder(b.mgr, b.cs, b.mgr.GetScheme())
	if err != nil {
		return fmt.Errorf("starting the event recorder: %w", err)
	}
	if err := b.mgr.Add(b.lease); err != nil {
		return err
	}
	holders := &lease.Checker{Leases: b.cs.CoordinationV1(), Namespace: leaseNamespace(b.opts)}
	kinds := depends.Kinds{GVKs: make([]schema.GroupVersionKind, len(b.ws)), CrossNamespace: b.opts.AllowCrossNamespaceRefs}
	for i, w := range b.ws {
		kinds.GVKs[i] = w.GVK
	}
	rollouts, err := b.rollouts()
	if err != nil {
		return err
	}
	for _, w := range b.ws {
		hooks, err := registry.Resolve(w.Hooks)
		if err != nil {
			return err // checkHooks saw to the names
		}
		r := &reconcile.Reconciler{
			Watch:        w,
			Kinds:        kinds,
			Hooks:        hooks,
			Holder:       b.holder,
			Holders:      holders,
			Lease:        b.lease,
			Client:       b.mgr.GetClient(),
			Storage:      b.store,
			Dependents:   b.dependents,
			Sources:      b.sources,
			APIReader:    b.mgr.GetAPIReader(),
			Helm:         b.helm,
			Impersonator: b.impersonator,
			Signatures:   b.signatures,
			Namespaces:   b.opts.Namespaces,
			Mapper:       b.mgr.GetRESTMapper(),
			Recorder:     recorder,
			NoCaches:     b.opts.NoCaches,
		}
		if err := b.addRollout(r, rollouts); err != nil {
			return err
		}
		if err := r.SetupWithManager(b.mgr); err != nil {
			return err
		}
	}
	return nil
}

func (b *builder) addWebhook() error {
	if b.opts.Webhook == nil {
		return nil
	}
	if err := b.opts.Webhook(b.mgr, Served{Watches: b.ws, Namespaces: b.opts.Namespaces, Selector: b.selected,
		DefaultServiceAccount: b.opts.DefaultServiceAccount, Namespace: leaseNamespace(b.opts), Config: b.cfg, Signatures: b.signatures}); err != nil {
		return fmt.Errorf("setting up the admission webhook: %w", err)
	}
	return nil
}

func (b *builder) addChecks() error {
	if err := b.mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	return b.mgr.AddReadyzCheck("caches", cachesSynced(b.mgr.GetCache(), b.store, b.dependents))
}
