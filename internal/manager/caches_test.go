package manager

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rudder-operator/rudder/internal/owner"
	"github.com/rudder-operator/rudder/internal/valuesfrom"
	"github.com/rudder-operator/rudder/internal/watches"
	"github.com/rudder-operator/rudder/test/testenv"
)

var webappGVK = schema.GroupVersionKind{Group: "webapp.my.domain", Version: "v1", Kind: "WebApp"}

// caches are the caches New builds for the custom resources, the releases'
// objects and the values sources, each with the informers a reconcile of a
// WebApp starts, and started.
type caches struct {
	resources, dependents, sources cache.Cache
	// informed is the object of each informer started, by cache.
	informed map[cache.Cache][]client.Object
}

func startCaches(ctx context.Context, t *testing.T, cfg *rest.Config) caches {
	t.Helper()
	ctrllog.SetLogger(logr.Discard())
	ws := []watches.Watch{{GVK: webappGVK}}
	opts := func(o cache.Options) cache.Options { o.Scheme = scheme.Scheme; return o }
	resources, err := cache.New(cfg, opts(resourceCache(ws, nil)))
	if err != nil {
		t.Fatal(err)
	}
	dependents, err := owner.NewCache(cfg, opts(cache.Options{}), ownerKinds(ws))
	if err != nil {
		t.Fatal(err)
	}
	sources, err := valuesfrom.NewCache(cfg, opts(cache.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	webapp := &unstructured.Unstructured{}
	webapp.SetGroupVersionKind(webappGVK)
	c := caches{resources: resources, dependents: dependents, sources: sources, informed: map[cache.Cache][]client.Object{
		resources:  {webapp},
		dependents: {&appsv1.Deployment{}, &corev1.Service{}, &corev1.ConfigMap{}},
		sources:    {valuesfrom.Object("ConfigMap"), valuesfrom.Object("Secret")},
	}}
	for cc, objs := range c.informed {
		go func() { _ = cc.Start(ctx) }()
		for _, obj := range objs {
			if _, err := cc.GetInformer(ctx, obj); err != nil {
				t.Fatal(err)
			}
		}
		if !cc.WaitForCacheSync(ctx) {
			t.Fatal("caches did not sync")
		}
	}
	return c
}

// held returns what the informer of obj's kind in c holds, uncopied.
func held(ctx context.Context, t *testing.T, c cache.Cache, obj client.Object) []any {
	t.Helper()
	inf, err := c.GetInformer(ctx, obj)
	if err != nil {
		t.Fatal(err)
	}
	return inf.(toolscache.SharedIndexInformer).GetStore().List()
}

// createRelease creates what a release of a WebApp named name holds in ns,
// as charts/webapp renders it and a reconcile leaves it: the WebApp with its
// status, its Deployment rolled out, its Service, and a ConfigMap of its
// values that the chart does not render but a values source may be.
func createRelease(ctx context.Context, k8s client.Client, ns, name string) error {
	webapp := testenv.NewObject(webappGVK, ns, name, map[string]any{"image": "nginx:1.25", "replicas": int64(1), "port": int64(80)})
	webapp.SetAnnotations(map[string]string{corev1.LastAppliedConfigAnnotation: `{"apiVersion":"webapp.my.domain/v1","kind":"WebApp","metadata":{"name":"` + name + `","namespace":"` + ns + `"},"spec":{"image":"nginx:1.25","port":80,"replicas":1}}`})
	if err := k8s.Create(ctx, webapp); err != nil {
		return err
	}
	now := metav1.Now().Rfc3339Copy().Format(time.RFC3339)
	condition := func(typ, reason, message string) map[string]any {
		return map[string]any{"type": typ, "status": "True", "reason": reason, "message": message, "observedGeneration": int64(1), "lastTransitionTime": now}
	}
	webapp.Object["status"] = map[string]any{
		"observedGeneration": int64(1), "phase": "Running", "message": "Release " + name + " revision 1 is ready",
		"replicas": int64(1), "readyReplicas": int64(1), "actingAs": "rudder",
		"release": map[string]any{"name": name, "revision": int64(1), "chart": "webapp", "chartVersion": "0.1.0", "appVersion": "1.25",
			"status": "deployed", "valuesDigest": "sha256:0c6f5bc8d1ab8d4f0e6c1e4b9e3a5c7d2f1b0a9e8d7c6b5a4f3e2d1c0b9a8f7e", "chartDigest": "sha256:4b2a8f1e0d9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a", "updated": now},
		"history": []any{map[string]any{"revision": int64(1), "chart": "webapp", "chartVersion": "0.1.0", "appVersion": "1.25", "status": "deployed", "updated": now,
			"valuesDigest": "sha256:0c6f5bc8d1ab8d4f0e6c1e4b9e3a5c7d2f1b0a9e8d7c6b5a4f3e2d1c0b9a8f7e"}},
		"conditions": []any{
			condition("Ready", "Ready", "Every object of release "+name+" revision 1 is ready"),
			condition("Released", "InstallSucceeded", "Installed revision 1 of chart webapp 0.1.0"),
		},
	}
	if err := k8s.Status().Update(ctx, webapp); err != nil {
		return err
	}
	yes := true
	release := "webapp-" + name
	labels := map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/instance": name, "app.kubernetes.io/managed-by": "Helm",
		"helm.sh/chart": "webapp-0.1.0", "app.kubernetes.io/version": "1.25", owner.LabelRelease: release}
	selector := map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/instance": name}
	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels,
			Annotations:     map[string]string{"meta.helm.sh/release-name": release, "meta.helm.sh/release-namespace": ns},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "webapp.my.domain/v1", Kind: "WebApp", Name: name, UID: webapp.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}}}
	}
	one := int32(1)
	readOnly := true
	dep := &appsv1.Deployment{ObjectMeta: meta(), Spec: appsv1.DeploymentSpec{
		Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: selector},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "webapp", Image: "nginx:1.25", ImagePullPolicy: corev1.PullIfNotPresent,
				Ports:           []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
				SecurityContext: &corev1.SecurityContext{ReadOnlyRootFilesystem: &readOnly, AllowPrivilegeEscalation: new(bool)},
				VolumeMounts:    []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}}}},
			Volumes: []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		}}}}
	if err := k8s.Create(ctx, dep); err != nil {
		return err
	}
	dep.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable", Message: "Deployment has minimum availability.",
				LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable", Message: `ReplicaSet "` + name + `-5d8f7c9b6" has successfully progressed.`,
				LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()},
		}}
	if err := k8s.Status().Update(ctx, dep); err != nil {
		return err
	}
	svc := &corev1.Service{ObjectMeta: meta(), Spec: corev1.ServiceSpec{Selector: selector,
		ClusterIP: corev1.ClusterIPNone, // envtest's range of addresses is small
		Ports:     []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}}}}
	if err := k8s.Create(ctx, svc); err != nil {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: meta(), Data: map[string]string{"values.yaml": "replicas: 1\nimage: nginx:1.25\n"}}
	cm.Name += "-values"
	return k8s.Create(ctx, cm)
}

// createReleases creates the releases of WebApps from to n in ns.
func createReleases(ctx context.Context, t *testing.T, k8s client.Client, ns string, from, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n-from)
	work := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range work {
				if err := createRelease(ctx, k8s, ns, fmt.Sprintf("app-%04d", i)); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := from; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestNew_CachesHoldObjectsOfTheirType: every object in the store of each
// cache New builds is of the type its informer was asked for, and so is its
// copy, which a read from the cache returns.
func TestNew_CachesHoldObjectsOfTheirType(t *testing.T) {
	cfg := testenv.StartFor(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	k8s, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := testenv.Namespace(t, k8s, "caches-")
	createReleases(ctx, t, k8s, ns, 0, 3)
	// What belongs to no WebApp but carries the label: held as metadata.
	stray := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stray", Labels: map[string]string{owner.LabelRelease: "forged"},
		Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: `{"data":{"k":"v"}}`}}, Data: map[string]string{"k": "v"}}
	if err := k8s.Create(ctx, stray); err != nil {
		t.Fatal(err)
	}
	c := startCaches(ctx, t, cfg)
	for cc, objs := range c.informed {
		for _, obj := range objs {
			want := reflect.TypeOf(obj)
			name := want.String()
			if k := obj.GetObjectKind().GroupVersionKind().Kind; k != "" {
				name += "/" + k
			}
			t.Run(name, func(t *testing.T) {
				var items []any
				testenv.Eventually(t, "the cache holds the namespace's objects", func() error {
					items = held(ctx, t, cc, obj)
					if len(items) == 0 && want != reflect.TypeFor[*metav1.PartialObjectMetadata]() {
						return fmt.Errorf("no object held")
					}
					return nil
				})
				for _, item := range items {
					if got := reflect.TypeOf(item); got != want {
						t.Errorf("the store holds a %v, want a %v", got, want)
						continue
					}
					o := item.(client.Object)
					if _, ok := o.GetAnnotations()[corev1.LastAppliedConfigAnnotation]; ok || len(o.GetManagedFields()) > 0 {
						t.Errorf("%s held with what no reader reads: its managed fields or last-applied annotation", o.GetName())
					}
					if got := reflect.TypeOf(item.(client.Object).DeepCopyObject()); got != want {
						t.Errorf("a copy of a held %v is a %v", want, got)
					}
				}
			})
		}
	}
}

// TestNew_CachesHoldLittlePerResource measures what the caches New builds
// hold for each additional WebApp's release, as `make bench-memory` does
// (test/bench): the live heap after a collection, with n1 and then n2
// releases held, the difference divided by n2-n1.
func TestNew_CachesHoldLittlePerResource(t *testing.T) {
	const n1, n2, maxPerRelease = 200, 1000, 20e3
	if os.Getenv("RUDDER_HEAP_PROFILE") != "" {
		runtime.MemProfileRate = 512 // every object the caches hold, near enough
	}
	cfg := testenv.StartFor(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	k8s, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := testenv.Namespace(t, k8s, "caches-")
	createReleases(ctx, t, k8s, ns, 0, n1)
	c := startCaches(ctx, t, cfg)
	webapp := c.informed[c.resources][0]
	holds := func(n int) {
		testenv.EventuallyWithin(t, 2*time.Minute, "the caches hold every object", func() error {
			for cc, objs := range c.informed {
				if cc == c.sources {
					continue
				}
				for _, obj := range objs {
					if got := len(held(ctx, t, cc, obj)); got != n {
						return fmt.Errorf("%d %T held, want %d", got, obj, n)
					}
				}
			}
			return nil
		})
	}
	holds(n1)
	before := liveHeap()
	heapProfile(t, "before")
	createReleases(ctx, t, k8s, ns, n1, n2)
	holds(n2)
	after := liveHeap()
	heapProfile(t, "after")
	per := float64(after-before) / (n2 - n1)
	t.Logf("live heap per additional release: %.2f KB (%d → %d releases, %.1f MB → %.1f MB)", per/1e3, n1, n2, float64(before)/1e6, float64(after)/1e6)
	// A ceiling that holding what no reader reads (managed fields, the
	// values ConfigMap's data) breaks, with room for the GC's noise.
	if per > maxPerRelease {
		t.Errorf("the caches hold %.2f KB per additional release, want at most %.0f KB", per/1e3, maxPerRelease/1e3)
	}
	runtime.KeepAlive(webapp)
}

// heapProfile writes a heap profile to $RUDDER_HEAP_PROFILE.name, when set,
// for `go tool pprof -base`.
func heapProfile(t *testing.T, name string) {
	path := os.Getenv("RUDDER_HEAP_PROFILE")
	if path == "" {
		return
	}
	f, err := os.Create(path + "." + name)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		_ = f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// liveHeap returns the bytes of the heap that are reachable after a
// collection, as `make bench-memory` reads them (go_memstats_heap_alloc_bytes).
func liveHeap() int64 {
	var m runtime.MemStats
	for range 2 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
