package stored_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/rudder-operator/rudder/internal/stored"
	"github.com/rudder-operator/rudder/test/testenv"
)

// BenchmarkNewCache measures the live heap the storage cache holds per
// revision (heap-bytes/revision): storage Secrets labeled as rudder's are,
// three revisions for each of many releases, read into a started cache.
func BenchmarkNewCache(b *testing.B) {
	const releases, revisions = 300, 3
	cfg := testenv.StartFor(b)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	const ns = "heap"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	for r := range releases {
		for v := 1; v <= revisions; v++ {
			name := fmt.Sprintf("webapp-app%d", r)
			s := &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, v), Labels: map[string]string{
					"owner": "helm", "name": name, "version": fmt.Sprint(v), "status": "superseded", "modifiedAt": "1764892800",
					"rudder.dev/chart-digest": "sha256-0123456789abcdef0123456789abcdef", "rudder.dev/values-digest": fmt.Sprintf("sha256-%032d", r*10+v),
					"rudder.dev/signature": fmt.Sprintf("%032x", r*10+v)}},
				Type: "helm.sh/release.v1",
				Data: map[string][]byte{"release": []byte("H4sI")},
			}
			if _, err := cs.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	var held float64
	for b.Loop() {
		settle() // what an earlier iteration's cache held is freed
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		c, err := stored.NewCache(cfg, cache.Options{Scheme: scheme.Scheme})
		if err != nil {
			b.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		go func() { _ = c.Start(cctx) }()
		if !c.WaitForCacheSync(cctx) {
			b.Fatal("the cache did not sync")
		}
		if _, err := c.GetInformer(cctx, stored.Object()); err != nil {
			b.Fatal(err)
		}
		if !c.WaitForCacheSync(cctx) {
			b.Fatal("the cache did not sync")
		}
		if revs, err := stored.History(cctx, c, ns, "webapp-app0"); err != nil || len(revs) != revisions {
			b.Fatalf("history: %d revisions, %v", len(revs), err)
		}
		settle()
		runtime.ReadMemStats(&after)
		held += float64(after.HeapAlloc) - float64(before.HeapAlloc)
		runtime.KeepAlive(c)
		cancel()
	}
	b.ReportMetric(held/float64(b.N)/(releases*revisions), "heap-bytes/revision")
}

// settle lets goroutines that are stopping stop, and collects garbage.
func settle() {
	for range 3 {
		runtime.GC()
		time.Sleep(100 * time.Millisecond)
	}
}
