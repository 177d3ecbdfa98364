package manager

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/rudder-operator/rudder"
	"github.com/rudder-operator/rudder/internal/depends"
	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/identity"
	"github.com/rudder-operator/rudder/internal/liveness"
	"github.com/rudder-operator/rudder/internal/owner"
	"github.com/rudder-operator/rudder/internal/reconcile"
	"github.com/rudder-operator/rudder/internal/signature"
	"github.com/rudder-operator/rudder/internal/storage"
	"github.com/rudder-operator/rudder/internal/valuesfrom"
	"github.com/rudder-operator/rudder/internal/watches"
)

// Run builds a manager from opts and runs it until ctx is done.
func Run(ctx context.Context, opts Options) error {
	opts.defaults()
	log, err := newLogger(opts.LogLevel, opts.LogFormat)
	if err != nil {
		return err
	}
	log = withoutBodies(log)
	ctrl.SetLogger(log)
	klog.SetLogger(log.WithName("client-go"))
	mgr, err := New(opts, log)
	if err != nil {
		return err
	}
	log.Info("Starting rudder", "watches", watchesSource(opts), "namespaces", opts.Namespaces, "shard", opts.Shard.String())
	return mgr.Start(ctx)
}

// New builds a manager from opts, with one release reconciler per watched
// kind. It refuses watches that do not load, naming the entry and the field.
func New(opts Options, log logr.Logger) (ctrl.Manager, error) {
	opts.defaults()
	log = withoutBodies(log)
	ws, err := loadWatches(opts.WatchesFile)
	if err != nil {
		return nil, err
	}
	if err := checkHooks(ws, opts.Hooks); err != nil {
		return nil, err
	}
	metrics, err := metricsServer(opts, log)
	if err != nil {
		return nil, err
	}
	cfg := opts.Config
	if cfg == nil {
		if cfg, err = ctrl.GetConfig(); err != nil {
			return nil, fmt.Errorf("finding the cluster: %w", err)
		}
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = opts.KubeAPIQPS, opts.KubeAPIBurst
	if err := opts.Shard.Check(); err != nil {
		return nil, err
	}
	selected, err := labelSelector(opts.WatchLabelSelector)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	// This process's Lease is written while it runs Helm actions; a sharded
	// process writes it first, as the probe of sharded lists looks for it.
	holder := holderID()
	lease, err := newLease(cs, leaseNamespace(opts), holder, opts.HolderLease, opts.Shard.Sharded())
	if err != nil {
		return nil, err
	}
	log.Info("This process holds its Lease while it runs Helm actions: pending revisions labeled with its holder are left alone while it lives",
		"holder", holder, "lease", leaseNamespace(opts)+"/"+liveness.Name(holder))
	newInformer, err := shardInformers(cs, opts.Shard, leaseNamespace(opts), liveness.Name(holder), log)
	if err != nil {
		return nil, err
	}
	var leaderLock resourcelock.Interface // nil: controller-runtime's, unused without leader election
	if opts.LeaderElection {
		if leaderLock, err = newReshardLock(cs, opts.Shard, leaseNamespace(opts), leaderElectionID(opts.Shard), holder); err != nil {
			return nil, err
		}
	}
	namespaces := map[string]cache.Config{}
	for _, ns := range opts.Namespaces {
		namespaces[ns] = cache.Config{}
	}
	// Every cache holds only this shard's namespaces (package shard).
	cacheOptions := func(o cache.Options) cache.Options {
		o.DefaultNamespaces, o.NewInformer = namespaces, newInformer
		return o
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                              scheme.Scheme,
		Logger:                              log,
		Metrics:                             metrics,
		HealthProbeBindAddress:              opts.ProbeAddr,
		PprofBindAddress:                    opts.PprofAddr,
		LeaderElection:                      opts.LeaderElection,
		LeaderElectionID:                    leaderElectionID(opts.Shard),
		LeaderElectionNamespace:             opts.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel:       true,
		LeaderElectionResourceLockInterface: leaderLock,
		GracefulShutdownTimeout:             &opts.GracefulShutdown,
		Cache:                               cacheOptions(resourceCache(ws, selected)),
		// Custom resources and the objects of releases are read as
		// unstructured objects; read them from the cache too.
		Client: client.Options{Cache: &client.CacheOptions{Unstructured: true}},
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	store, err := storage.NewCache(cfg, cacheOptions(cache.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), HTTPClient: mgr.GetHTTPClient(),
	}))
	if err != nil {
		return nil, err
	}
	if _, err := store.GetInformer(context.Background(), storage.Object(), cache.BlockUntilSynced(false)); err != nil {
		return nil, fmt.Errorf("watching release storage: %w", err)
	}
	if err := mgr.Add(warmCache{store}); err != nil {
		return nil, err
	}
	dependents, err := owner.NewCache(cfg, cacheOptions(cache.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), HTTPClient: mgr.GetHTTPClient(),
	}), ownerKinds(ws))
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(warmCache{dependents}); err != nil {
		return nil, err
	}
	sources, err := valuesfrom.NewCache(cfg, cacheOptions(cache.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), HTTPClient: mgr.GetHTTPClient(),
	}))
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(warmCache{sources}); err != nil {
		return nil, err
	}
	keyNamespace, keyName, err := revisionKeySecret(opts)
	if err != nil {
		return nil, err
	}
	key, err := revisionKey(context.Background(), cs, keyNamespace, keyName)
	if err != nil {
		return nil, err
	}
	signatures := signature.NewKey(key)
	hg, err := helm.NewGetter(cfg, mgr.GetRESTMapper(), log.WithName("helm"), helm.WithSigningKey(signatures))
	if err != nil {
		return nil, err
	}
	impersonator := &identity.Impersonator{Config: cfg, Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), Default: opts.DefaultServiceAccount,
		Allowed: namespaceAccounts(mgr.GetCache())}
	if opts.DefaultServiceAccount != "" {
		log.Info("Acting for each custom resource as a ServiceAccount of its namespace", "serviceAccount", opts.DefaultServiceAccount)
	} else {
		log.Info("Acting with rudder's own rights for custom resources without the annotation " + identity.Annotation + " (docs/security.md)")
	}
	registry, err := builtinHooks(mgr, opts.Hooks)
	if err != nil {
		return nil, err
	}
	recorder, err := newRecorder(mgr, cs, mgr.GetScheme())
	if err != nil {
		return nil, fmt.Errorf("starting the event recorder: %w", err)
	}
	if err := mgr.Add(lease); err != nil {
		return nil, err
	}
	holders := &liveness.Checker{Leases: cs.CoordinationV1(), Namespace: leaseNamespace(opts)}
	kinds := depends.Kinds{GVKs: make([]schema.GroupVersionKind, len(ws)), CrossNamespace: opts.AllowCrossNamespaceRefs}
	for i, w := range ws {
		kinds.GVKs[i] = w.GVK
	}
	for _, w := range ws {
		hooks, err := registry.Resolve(w.Hooks)
		if err != nil {
			return nil, err // checkHooks saw to the names
		}
		r := &reconcile.Reconciler{
			Watch:        w,
			Kinds:        kinds,
			Hooks:        hooks,
			Holder:       holder,
			Holders:      holders,
			Lease:        lease,
			Client:       mgr.GetClient(),
			Storage:      store,
			Dependents:   dependents,
			Sources:      sources,
			APIReader:    mgr.GetAPIReader(),
			Helm:         hg,
			Impersonator: impersonator,
			Signatures:   signatures,
			Namespaces:   opts.Namespaces,
			Mapper:       mgr.GetRESTMapper(),
			Recorder:     recorder,
		}
		if err := r.SetupWithManager(mgr); err != nil {
			return nil, err
		}
	}
	if opts.Webhook != nil {
		if err := opts.Webhook(mgr, Served{Watches: ws, Namespaces: opts.Namespaces, Selector: selected,
			DefaultServiceAccount: opts.DefaultServiceAccount, Namespace: leaseNamespace(opts), Config: cfg, Signatures: signatures}); err != nil {
			return nil, fmt.Errorf("setting up the admission webhook: %w", err)
		}
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("caches", cachesSynced(mgr.GetCache(), store, dependents)); err != nil {
		return nil, err
	}
	return mgr, nil
}

// resourceCache returns the options of the manager's cache. It holds the
// custom resources of ws (only those selected, when selected is set) as the
// API server sends them, but for what no reader reads: their managed fields
// and kubectl's last-applied annotation, a copy of the whole object. Every
// change to a custom resource is a patch of what changed, so nothing dropped
// is ever written back. Of any other kind it drops the managed fields.
func resourceCache(ws []watches.Watch, selected labels.Selector) cache.Options {
	kinds := make(map[schema.GroupVersionKind]bool, len(ws))
	var byObject map[client.Object]cache.ByObject
	for _, w := range ws {
		kinds[w.GVK] = true
		if selected != nil {
			// Only with a selector: a kind in ByObject must be served
			// by the API server when the manager is made.
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(w.GVK)
			if byObject == nil {
				byObject = map[client.Object]cache.ByObject{}
			}
			byObject[u] = cache.ByObject{Label: selected}
		}
	}
	strip := cache.TransformStripManagedFields()
	return cache.Options{ByObject: byObject, DefaultTransform: func(in any) (any, error) {
		if u, ok := in.(*unstructured.Unstructured); ok && kinds[u.GroupVersionKind()] {
			withoutLastApplied(u)
		}
		return strip(in)
	}}
}

// withoutLastApplied drops kubectl's last-applied annotation from u.
func withoutLastApplied(u *unstructured.Unstructured) {
	a := u.GetAnnotations() // a copy
	if _, ok := a[corev1.LastAppliedConfigAnnotation]; ok {
		delete(a, corev1.LastAppliedConfigAnnotation)
		u.SetAnnotations(a)
	}
}

// ownerKinds are the kinds of custom resources of ws, which own the objects
// of their releases.
func ownerKinds(ws []watches.Watch) []schema.GroupKind {
	out := make([]schema.GroupKind, len(ws))
	for i, w := range ws {
		out[i] = w.GVK.GroupKind()
	}
	return out
}

// warmCache runs a cache on every replica, leader or standby. The manager
// would otherwise start it only on the leader (a Runnable needs leader
// election unless it says not): a standby would then never pass the readiness
// check, which waits for the caches, and would list every release only once
// it took over, slowing the failover.
type warmCache struct{ cache.Cache }

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (warmCache) NeedLeaderElection() bool { return false }

// cachesSynced is ready once both caches have synced.
func cachesSynced(caches ...cache.Cache) healthz.Checker {
	return func(req *http.Request) error {
		for _, c := range caches {
			if !c.WaitForCacheSync(req.Context()) {
				return errors.New("caches are not synced yet")
			}
		}
		return nil
	}
}

func loadWatches(file string) ([]watches.Watch, error) {
	if file != "" {
		return watches.LoadFile(file)
	}
	return watches.Load(rudder.Files, rudder.WatchesFile)
}

// newLease returns this process's Lease (package liveness), which the
// manager renews while actions hold it once added to it; created now when
// acquire is set.
func newLease(cs kubernetes.Interface, ns, holder string, d time.Duration, acquire bool) (*liveness.Lease, error) {
	lease := &liveness.Lease{Leases: cs.CoordinationV1(), Namespace: ns, Holder: holder, Duration: d, Renew: d / 3}
	if acquire {
		if err := lease.Acquire(context.Background()); err != nil {
			return nil, err
		}
	}
	return lease, nil
}

// leaseNamespace is where the processes' Leases live: the leader election's
// namespace, else the one rudder runs in, else "default" (outside a cluster).
func leaseNamespace(opts Options) string {
	if opts.LeaderElectionNamespace != "" {
		return opts.LeaderElectionNamespace
	}
	if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil && len(bytes.TrimSpace(b)) > 0 {
		return string(bytes.TrimSpace(b))
	}
	return "default"
}

// holderID names this process on the revisions it writes: the host (the pod's
// name in a cluster) and a random suffix, so that a restarted process is told
// apart from the one before it. It is a valid label value.
func holderID() string {
	host, _ := os.Hostname()
	host = strings.Trim(invalidLabelChars.ReplaceAllString(host, "-"), "-._")
	if len(host) > 50 {
		host = strings.Trim(host[:50], "-._")
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	if host == "" {
		host = "rudder"
	}
	return host + "." + hex.EncodeToString(suffix)
}

var invalidLabelChars = regexp.MustCompile(`[^A-Za-z0-9._-]`)

func watchesSource(opts Options) string {
	if opts.WatchesFile != "" {
		return opts.WatchesFile
	}
	return "embedded"
}

// namespaceAccounts returns the accounts the resources of a namespace may
// name (identity.NamespaceAnnotation), read from the metadata of Namespaces
// in c, which the controllers watch (reconcile.Reconciler).
func namespaceAccounts(c cache.Cache) func(ctx context.Context, ns string) ([]string, error) {
	return func(ctx context.Context, ns string) ([]string, error) {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
		if err := c.Get(ctx, client.ObjectKey{Name: ns}, m); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		return identity.AllowedBy(m.GetAnnotations()), nil
	}
}
