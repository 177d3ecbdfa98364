package manager

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/rudder-operator/rudder"
	"github.com/rudder-operator/rudder/internal/identity"
	"github.com/rudder-operator/rudder/internal/lease"
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

// newLease returns this process's Lease (package lease), which the
// manager renews while actions hold it once added to it; created now when
// acquire is set.
func newLease(cs kubernetes.Interface, ns, holder string, d time.Duration, acquire bool) (*lease.Lease, error) {
	l := &lease.Lease{Leases: cs.CoordinationV1(), Namespace: ns, Holder: holder, Duration: d, Renew: d / 3}
	if acquire {
		if err := l.Acquire(context.Background()); err != nil {
			return nil, err
		}
	}
	return l, nil
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
