//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Issue 11, defect 7: two managers running at once (leader election off,
// both watching the test's namespace only)
// never mark each other's in-flight operations failed. Each holds a Lease
// (internal/lease) while it runs; a revision pending by the other is the
// other's to finish while that Lease is fresh. A wave of installs and image
// changes on 12 WebApps, served by both, converges with no revision unlocked
// and none failed.
func TestPeers_TwoManagersNeverBreakEachOthersOperations(t *testing.T) {
	t.Parallel() // its own operators over its own namespace
	const ns, n = "peers", 12
	op := privateOperator(t, ns)
	peer, err := startOperator(ns+"-peer", []string{ns})
	t.Cleanup(func() {
		if peer.cur != nil {
			_ = peer.cur.stop(shutdownTimeout)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	apps := make([]*lcApp, n)
	for i := range apps {
		apps[i] = newApp(t, ns, fmt.Sprintf("peer-%02d", i))
		apps[i].create(map[string]any{"image": "nginx:1.21", "replicas": 1, "port": 80})
	}
	for _, a := range apps {
		a.patch(`{"spec":{"image":"nginx:1.22"}}`)
	}
	eventuallyWithin(t, 5*time.Minute, "every WebApp on nginx:1.22, nothing pending", func() error {
		for _, a := range apps {
			if err := a.convergedOn("nginx:1.22"); err != nil {
				return err
			}
		}
		return nil
	})
	for _, a := range apps {
		for _, r := range a.mustHistory() {
			if r.Status == "failed" || strings.Contains(r.Description, "unlocked by rudder") {
				t.Errorf("release %s revision %d: %s (%s): a manager broke its peer's operation", a.release(), r.Revision, r.Status, r.Description)
			}
		}
	}
	for _, log := range []string{op.cur.tail(1 << 20), peer.cur.tail(1 << 20)} {
		if strings.Contains(log, "Unlocked a revision left pending") {
			t.Errorf("a manager unlocked a revision its running peer held")
		}
	}
}
