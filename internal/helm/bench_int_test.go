package helm_test

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/signature"
	"github.com/rudder-operator/rudder/test/testenv"
)

// BenchmarkClient is what a reconcile that installs or upgrades a WebApp's
// release costs rudder's process, storage among the rest: an install; the
// upgrade of a release with ten stored revisions (kept at ten by
// MaxHistory), then the read of the revision it stored, as the reconciler
// reads the deployed revision. cpu-ns/op is the process's own CPU (user and
// system), which ns/op, the wall time, mixes with the API server's.
func BenchmarkClient(b *testing.B) {
	cfg := testenv.StartFor(b)
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		b.Fatal(err)
	}
	g, err := helm.NewGetter(cfg, mapper, logr.Discard(), helm.WithSigningKey(signature.NewKey([]byte("bench key"))))
	if err != nil {
		b.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	const ns = "bench"
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	chrt, err := helm.LoadChart(os.DirFS("../../charts"), "webapp")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	spec := func(n int) helm.Spec {
		return helm.Spec{Name: "webapp-front", Chart: chrt, MaxHistory: 10,
			Values: map[string]any{"image": fmt.Sprintf("nginx:1.%d", n), "port": 80}}
	}
	client := func() *helm.Client {
		c, err := g.For(helm.Access{Scope: helm.Scope{Namespace: ns}})
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	if _, err := client().Install(ctx, spec(0)); err != nil {
		b.Fatal(err)
	}
	for n := 1; n < 10; n++ {
		if _, err := client().Upgrade(ctx, spec(n)); err != nil {
			b.Fatal(err)
		}
	}
	i := 0 // installs so far: each installs a release of its own
	b.Run("install", func(b *testing.B) {
		cpu0 := processCPU()
		for b.Loop() {
			s := spec(0)
			s.Name = fmt.Sprintf("webapp-new%d", i)
			if _, err := client().Install(ctx, s); err != nil {
				b.Fatal(err)
			}
			i++
		}
		b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	})
	b.Run("upgrade of ten revisions", func(b *testing.B) {
		upgrade(b, g, client, spec)
	})
}

func upgrade(b *testing.B, g *helm.Getter, client func() *helm.Client, spec func(int) helm.Spec) {
	const ns = "bench"
	ctx := context.Background()
	n := 10
	cpu0 := processCPU()
	for b.Loop() {
		rel, err := client().Upgrade(ctx, spec(n))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := g.Revision(ns, rel.Name, rel.Revision, ""); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	revs, err := g.History(ns, "webapp-front", "")
	if err != nil || len(revs) != 10 {
		b.Fatalf("history after the upgrades: %d revisions, %v; want 10", len(revs), err)
	}
}

// processCPU is the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
