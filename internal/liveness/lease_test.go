package liveness_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/rudder-operator/rudder/internal/liveness"
	"github.com/rudder-operator/rudder/internal/testenv"
)

var cs kubernetes.Interface

func TestMain(m *testing.M) {
	env, cfg, err := testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cs = kubernetes.NewForConfigOrDie(cfg)
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}

// A process's Lease reads alive while the process renews it, expired once it
// stops renewing (killed), and gone once it stops (deleted): only then may
// another process take its pending operations over.
func TestLease_AliveWhileRenewed(t *testing.T) {
	ctx := context.Background()
	checker := &liveness.Checker{Leases: cs.CoordinationV1(), Namespace: "default"}
	running := &liveness.Lease{Leases: cs.CoordinationV1(), Namespace: "default", Holder: "host_A.1f2e", Duration: 2 * time.Second, Renew: 300 * time.Millisecond}
	killed := &liveness.Lease{Leases: cs.CoordinationV1(), Namespace: "default", Holder: "host-b.3c4d", Duration: 2 * time.Second}
	for _, l := range []*liveness.Lease{running, killed} {
		if err := l.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- running.Start(runCtx) }()

	alive := func(holder string) bool {
		t.Helper()
		ok, err := checker.Alive(ctx, holder)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !alive("host_A.1f2e") || !alive("host-b.3c4d") {
		t.Fatal("fresh Leases read as gone")
	}
	time.Sleep(3 * time.Second) // past the Duration: only renewing keeps a Lease fresh
	if !alive("host_A.1f2e") {
		t.Error("a renewed Lease reads as gone")
	}
	if alive("host-b.3c4d") {
		t.Error("a Lease not renewed for longer than its duration reads as alive")
	}
	if alive("never-ran.0000") {
		t.Error("a process without a Lease reads as alive")
	}

	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoordinationV1().Leases("default").Get(ctx, liveness.Name("host_A.1f2e"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Lease of a stopped process is still there (err %v)", err)
	}
	if alive("host_A.1f2e") {
		t.Error("a stopped process reads as alive")
	}
}
