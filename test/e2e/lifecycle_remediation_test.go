//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// remediationWatches is the repository's watches.yaml with remediation
// strategy rollback and readinessTimeout 20s on WebApp.
const remediationWatches = "test/e2e/testdata/watches-remediation.yaml"

// TestLifecycle_ReadinessTimeoutRollsBack: with remediation strategy
// rollback and readinessTimeout 20s, an upgrade whose pods can never be
// scheduled (a CPU request larger than any node) is rolled back once, after
// the timeout, to the revision before it; Released and Ready say
// RolledBackAfterFailure and name the Deployment; no further revision follows;
// a change of the spec ends the hold.
func TestLifecycle_ReadinessTimeoutRollsBack(t *testing.T) {
	t.Parallel() // its own operator over its own namespace
	privateOperator(t, "lc-stall", "--watches-file="+filepath.Join(root, remediationWatches))
	a := newApp(t, "lc-stall", "lc-stall")
	a.create(map[string]any{"image": "nginx:1.21", "replicas": 1, "port": 80})
	wa := a.waitServing(1, "nginx:1.21", 1)
	uid := string(wa.Metadata.UID)

	// The kwok nodes have 64 CPUs each: the new pod stays Pending.
	deployedAt := time.Now()
	a.patch(`{"spec":{"image":"nginx:1.22","resources":{"requests":{"cpu":"500"}}}}`)
	eventually(t, "revision 2 deployed and not Ready", func() error {
		wa, err := a.get()
		if err != nil {
			return err
		}
		if wa.Status.Release == nil || wa.Status.Release.Revision != 2 {
			return fmt.Errorf("expected status.release.revision 2, saw %s", toJSON(wa.Status.Release))
		}
		return checkCondition(wa, "Ready", metav1.ConditionFalse, "Progressing", "Deployment")
	})

	remediated := a.waitCondition("Ready", metav1.ConditionFalse, "RolledBackAfterFailure",
		"Rollback to 1: revision 2 was not Ready within 20s", "Deployment", a.name)
	if waited := time.Since(deployedAt); waited < 20*time.Second {
		t.Errorf("expected the rollback no sooner than the readinessTimeout of 20s after the deploy, saw it after %s", waited.Round(time.Second))
	}
	t.Logf("Ready: %s", remediated.Message)
	a.waitCondition("Released", metav1.ConditionFalse, "RolledBackAfterFailure",
		"Revision 3 serves; rudder holds it until the spec or the chart changes")
	a.waitEvent(uid, "RolledBackAfterFailure", "Rolled back to revision 1 as revision 3", "revision 2 was not Ready within 20s")
	revs := a.mustHistory()
	a.checkHistory(revs, 3, map[int]string{3: "Rollback to 1: revision 2 was not Ready within 20s"})
	if err := a.sameValues(map[string]any{"image": "nginx:1.21", "replicas": 1, "port": 80}); err != nil {
		t.Errorf("after the rollback: expected revision 1's values: %v", err)
	}
	eventually(t, "the Deployment back on revision 1's pod template, ready", func() error {
		d, err := a.deployment()
		if err != nil {
			return err
		}
		c := d.Spec.Template.Spec.Containers[0]
		if c.Image != "nginx:1.21" || !c.Resources.Requests.Cpu().IsZero() || d.Status.ReadyReplicas != 1 || d.Status.UpdatedReplicas != 1 {
			return fmt.Errorf("expected Deployment %s with 1 ready, updated replica of nginx:1.21 without a CPU request, saw %s requesting %s; %d ready, %d updated",
				a.name, c.Image, c.Resources.Requests.Cpu(), d.Status.ReadyReplicas, d.Status.UpdatedReplicas)
		}
		return nil
	})

	// Held: no retry and no second rollback, across a reconcile asked for now.
	a.poke()
	a.holdsSteady(30*time.Second, 3, "nginx:1.21")
	if err := checkCondition(a.mustGet(), "Released", metav1.ConditionFalse, "RolledBackAfterFailure"); err != nil {
		t.Errorf("after 30s on hold: %v", err)
	}

	// A spec change releases the hold.
	a.patch(`{"spec":{"resources":{"requests":{"cpu":"100m"}}}}`)
	a.waitServing(4, "nginx:1.22", 1)
	a.waitCondition("Released", metav1.ConditionTrue, "UpgradeSucceeded", "Revision 4 is deployed")
}

// TestLifecycle_FailedUpgradesAreBounded: a spec the CRD accepts but the
// chart's template refuses (storage.mountPath "/tmp/.", which is /tmp) fails
// to render: the old revision keeps serving, no revision is stored, and after
// maxAttempts (3) tries Released says RetriesExhausted and rudder holds. A
// spec whose Deployment the API server rejects (a nodeSelector key that is no
// label key) stores at most 3 failed revisions, then holds likewise. A good
// spec then deploys.
func TestLifecycle_FailedUpgradesAreBounded(t *testing.T) {
	t.Parallel() // own namespace; never restarts the manager or the cluster
	createNamespace(t, "lc-fail")
	a := newApp(t, "lc-fail", "lc-fail")
	a.create(map[string]any{"image": "nginx:1.21", "replicas": 1, "port": 80})
	wa := a.waitServing(1, "nginx:1.21", 1)
	uid := string(wa.Metadata.UID)

	// A render error: nothing is stored, revision 1 serves throughout.
	a.patch(`{"spec":{"image":"nginx:1.22","storage":{"enabled":true,"mountPath":"/tmp/."}}}`)
	const renderError = "storage.mountPath must not be /tmp"
	a.waitEvent(uid, "UpgradeFailed", renderError)
	a.waitCondition("Released", metav1.ConditionFalse, "UpgradeFailed", renderError)
	eventuallyWithin(t, 3*time.Minute, "Released False (RetriesExhausted) after 3 tries", func() error {
		if err := a.servesRevision1(); err != nil {
			return err
		}
		wa, err := a.get()
		if err != nil {
			return err
		}
		return checkCondition(wa, "Released", metav1.ConditionFalse, "RetriesExhausted", "Gave up after 3 failed tries", renderError)
	})
	a.holdsSteady(20*time.Second, 1, "nginx:1.21")
	if out := kubectl(t, "get", "pvc", "-n", a.ns, "--ignore-not-found", "-o", "name", a.name); strings.TrimSpace(out) != "" {
		t.Errorf("expected no PersistentVolumeClaim of the spec that did not render, saw %s", out)
	}
	if err := a.servesRevision1(); err != nil {
		t.Error(err)
	}

	// An object the API server rejects: failed revisions, at most maxAttempts of them.
	a.patch(`{"spec":{"storage":null,"nodeSelector":{"not a label key!":"x"}}}`)
	const rejected = "nodeSelector"
	eventuallyWithin(t, 3*time.Minute, "Released False (RetriesExhausted) after 3 failed revisions", func() error {
		if err := a.servesRevision1(); err != nil {
			return err
		}
		wa, err := a.get()
		if err != nil {
			return err
		}
		return checkCondition(wa, "Released", metav1.ConditionFalse, "RetriesExhausted", "Gave up after 3 failed tries", rejected)
	})
	a.holdsSteady(20*time.Second, 4, "nginx:1.21")
	revs := a.mustHistory()
	failed := 0
	for _, r := range revs {
		if r.Status == "failed" {
			failed++
		}
	}
	if len(revs) != 4 || failed != 3 || revs[0].Status != "deployed" {
		t.Errorf("helm history %s: expected revision 1 deployed and 3 failed revisions (maxAttempts), saw %s", a.release(), toJSON(revs))
	}

	// A good spec deploys.
	a.patch(`{"spec":{"nodeSelector":null}}`)
	a.waitServing(5, "nginx:1.22", 1)
}

// servesRevision1 says how the release differs from revision 1 deployed,
// newest of those deployed, with its Deployment on nginx:1.21.
func (a *lcApp) servesRevision1() error {
	revs, err := a.history()
	if err != nil {
		return err
	}
	for i := len(revs) - 1; i >= 0; i-- {
		if revs[i].Status == "deployed" {
			if revs[i].Revision != 1 {
				return fmt.Errorf("expected revision 1 to stay deployed, saw revision %d deployed: %s", revs[i].Revision, toJSON(revs))
			}
			break
		}
	}
	d, err := a.deployment()
	if err != nil {
		return err
	}
	if got := d.Spec.Template.Spec.Containers[0].Image; got != "nginx:1.21" || d.Status.ReadyReplicas != 1 {
		return fmt.Errorf("expected Deployment %s serving 1 ready replica of nginx:1.21, saw %d of %s", a.name, d.Status.ReadyReplicas, got)
	}
	return nil
}
