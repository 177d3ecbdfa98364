package lease_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/rudder-operator/rudder/internal/lease"
	"github.com/rudder-operator/rudder/test/testenv"
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

// A process's Lease reads alive while an action holds it, expired once the
// process stops renewing it (killed, or no action held it since), and gone
// once the process stops (deleted): only then may another process take its
// pending operations over.
func TestLease_AliveWhileHeld(t *testing.T) {
	ctx := context.Background()
	checker := &lease.Checker{Leases: cs.CoordinationV1(), Namespace: "default"}
	running := &lease.Lease{Leases: cs.CoordinationV1(), Namespace: "default", Holder: "host_A.1f2e", Duration: 2 * time.Second, Renew: 300 * time.Millisecond}
	killed := &lease.Lease{Leases: cs.CoordinationV1(), Namespace: "default", Holder: "host-b.3c4d", Duration: 2 * time.Second}
	if err := killed.Acquire(ctx); err != nil {
		t.Fatal(err)
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
	exists := func(holder string) bool {
		t.Helper()
		_, err := cs.CoordinationV1().Leases("default").Get(ctx, lease.Name(holder), metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	time.Sleep(time.Second)
	if exists("host_A.1f2e") {
		t.Fatal("a process that ran no action wrote its Lease")
	}
	release, err := running.Hold(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !alive("host_A.1f2e") || !alive("host-b.3c4d") {
		t.Fatal("fresh Leases read as gone")
	}
	time.Sleep(3 * time.Second) // past the Duration: only renewing keeps a Lease fresh
	if !alive("host_A.1f2e") {
		t.Error("a Lease held by an action reads as gone")
	}
	if alive("host-b.3c4d") {
		t.Error("a Lease not renewed for longer than its duration reads as alive")
	}
	if alive("never-ran.0000") {
		t.Error("a process without a Lease reads as alive")
	}

	release()
	release() // twice is once
	time.Sleep(3 * time.Second)
	if alive("host_A.1f2e") {
		t.Error("a Lease no action held for longer than its duration reads as alive")
	}
	again, err := running.Hold(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !alive("host_A.1f2e") {
		t.Error("a Lease held again reads as gone")
	}
	again()

	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if exists("host_A.1f2e") {
		t.Error("the Lease of a stopped process is still there")
	}
	if alive("host_A.1f2e") {
		t.Error("a stopped process reads as alive")
	}
}

// Hold fails, and no action may start, when the Lease cannot be written.
func TestLease_HoldFailsWhenTheLeaseCannotBeWritten(t *testing.T) {
	l := &lease.Lease{Leases: cs.CoordinationV1(), Namespace: "no-such-namespace", Holder: "host-c.5e6f"}
	if done, err := l.Hold(context.Background()); err == nil {
		done()
		t.Fatal("Hold succeeded in a namespace that does not exist")
	} else if !strings.Contains(err.Error(), "before a Helm action") {
		t.Errorf("Hold's error does not say what it was for: %v", err)
	}
}
