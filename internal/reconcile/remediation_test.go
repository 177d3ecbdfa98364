package reconcile_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/stored"
	"github.com/rudder-operator/rudder/test/testenv"
)

// Sprocket: remediation strategy rollback, maxAttempts 2, readinessTimeout 2s,
// installFailure uninstall, outOfBand keep. Widget: the defaults (retry, 3
// attempts, keep failed installs, revert) with readinessTimeout 2s. Both
// serve testdata/charts/remedy.
var (
	sprocketGVK = schema.GroupVersionKind{Group: "test.rudder.dev", Version: "v1", Kind: "Sprocket"}
	widgetGVK   = schema.GroupVersionKind{Group: "test.rudder.dev", Version: "v1", Kind: "Widget"}
)

func patchSpec(t *testing.T, gvk schema.GroupVersionKind, ns, name, spec string) {
	t.Helper()
	patch := []byte(`{"spec":` + spec + `}`)
	if err := k8s.Patch(ctx, get(t, gvk, ns, name), client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
}

func create(t *testing.T, gvk schema.GroupVersionKind, ns, name string, spec map[string]any) {
	t.Helper()
	if err := k8s.Create(ctx, testenv.NewObject(gvk, ns, name, spec)); err != nil {
		t.Fatal(err)
	}
}

// conditionSays waits for a condition with status, reason and message parts.
func conditionSays(t *testing.T, gvk schema.GroupVersionKind, ns, name, typ string, status metav1.ConditionStatus, reason string, parts ...string) {
	t.Helper()
	testenv.Eventually(t, fmt.Sprintf("%s %s/%s", typ, status, reason), func() error {
		cr := get(t, gvk, ns, name)
		if err := conditionIs(cr, typ, status, reason); err != nil {
			return err
		}
		for _, p := range parts {
			if msg := testenv.Condition(cr, typ).Message; !strings.Contains(msg, p) {
				return fmt.Errorf("%s message %q does not say %q", typ, msg, p)
			}
		}
		return nil
	})
}

// stays checks that the release of the gvk resource ns/name keeps exactly
// these revisions for a while, and after a reconcile asked for once that
// while is over: the positive signal that rudder did look again.
func stays(t *testing.T, gvk schema.GroupVersionKind, ns, name string, d time.Duration, want ...string) {
	t.Helper()
	release := strings.ToLower(gvk.Kind) + "-" + name
	waitRevisions(t, ns, release, want...)
	time.Sleep(d)
	reconciled(t, gvk, ns, name)
	waitRevisions(t, ns, release, want...)
}

// reconciled asks for a reconcile of the gvk resource ns/name
// (AnnotationReconcileRequestedAt) and waits until its status says one ran.
func reconciled(t *testing.T, gvk schema.GroupVersionKind, ns, name string) {
	t.Helper()
	token := time.Now().UTC().Format(time.RFC3339Nano)
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, status.AnnotationReconcileRequestedAt, token)
	if err := k8s.Patch(ctx, get(t, gvk, ns, name), client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "a reconcile of "+ns+"/"+name+" after the request "+token, func() error {
		handled, _, _ := unstructured.NestedString(get(t, gvk, ns, name).Object, "status", "lastHandledReconcileAt")
		if handled != token {
			return fmt.Errorf("status.lastHandledReconcileAt %q", handled)
		}
		return nil
	})
}

func configMapSays(t *testing.T, ns, name, message string) {
	t.Helper()
	testenv.Eventually(t, "ConfigMap message "+message, func() error {
		var cm corev1.ConfigMap
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cm); err != nil {
			return err
		}
		if cm.Data["message"] != message {
			return fmt.Errorf("ConfigMap message %q", cm.Data["message"])
		}
		return nil
	})
}

func TestReconciler_RenderFailureWithRollbackStrategyKeepsTheOldRevision(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, sprocketGVK, ns, "render", map[string]any{"message": "one"})
	waitRevisions(t, ns, "sprocket-render", "1:deployed")

	patchSpec(t, sprocketGVK, ns, "render", `{"fail":"the sprocket cannot render"}`)
	// Two attempts, 10s apart; a render error stores no revision, so there is
	// nothing to roll back: the old revision keeps serving untouched.
	conditionSays(t, sprocketGVK, ns, "render", "Released", metav1.ConditionFalse, status.ReasonRetriesExhausted,
		"Gave up after 2 failed tries", "the sprocket cannot render")
	stays(t, sprocketGVK, ns, "render", time.Second, "1:deployed")
	configMapSays(t, ns, "sprocket-render", "one")
}

func TestReconciler_RejectedUpgradeIsRolledBackOnceAfterTheLastAttempt(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, sprocketGVK, ns, "reject", map[string]any{"message": "one"})
	waitRevisions(t, ns, "sprocket-reject", "1:deployed")

	patchSpec(t, sprocketGVK, ns, "reject", `{"message":"two","reject":true}`)
	// maxAttempts 2: two failed revisions, then one rollback to revision 1.
	waitRevisions(t, ns, "sprocket-reject", "1:superseded", "2:failed", "3:failed", "4:deployed")
	conditionSays(t, sprocketGVK, ns, "reject", "Released", metav1.ConditionFalse, status.ReasonRemediated,
		"Rollback to 1", "2 attempts", "rejected", "holds it until the spec or the chart changes")
	conditionSays(t, sprocketGVK, ns, "reject", "Ready", metav1.ConditionFalse, status.ReasonRemediated, "Rollback to 1")
	configMapSays(t, ns, "sprocket-reject", "one")
	stays(t, sprocketGVK, ns, "reject", 2*time.Second, "1:superseded", "2:failed", "3:failed", "4:deployed")
}

func TestReconciler_ReadinessTimeoutRollsBackOnceThenHolds(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, sprocketGVK, ns, "slow", map[string]any{"message": "one"})
	waitRevisions(t, ns, "sprocket-slow", "1:deployed")
	conditionSays(t, sprocketGVK, ns, "slow", "Ready", metav1.ConditionTrue, status.ReasonReady)

	// envtest runs no controllers: the Deployment never becomes ready.
	patchSpec(t, sprocketGVK, ns, "slow", `{"deployment":true}`)
	waitRevisions(t, ns, "sprocket-slow", "1:superseded", "2:superseded", "3:deployed")
	conditionSays(t, sprocketGVK, ns, "slow", "Released", metav1.ConditionFalse, status.ReasonRemediated,
		"Rollback to 1: revision 2 was not Ready within 2s", "Deployment/sprocket-slow")
	conditionSays(t, sprocketGVK, ns, "slow", "Ready", metav1.ConditionFalse, status.ReasonRemediated, "Deployment/sprocket-slow")
	testenv.Eventually(t, "the Deployment removed by the rollback", func() error {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sprocket-slow"}, &appsv1.Deployment{})
		if err == nil {
			return errors.New("the Deployment is still there")
		}
		return client.IgnoreNotFound(err)
	})
	stays(t, sprocketGVK, ns, "slow", 4*time.Second, "1:superseded", "2:superseded", "3:deployed") // no loop

	// A spec change ends the hold.
	patchSpec(t, sprocketGVK, ns, "slow", `{"deployment":false,"message":"two"}`)
	waitRevisions(t, ns, "sprocket-slow", "1:superseded", "2:superseded", "3:superseded", "4:deployed")
	conditionSays(t, sprocketGVK, ns, "slow", "Released", metav1.ConditionTrue, status.ReasonUpgradeSucceeded)
	configMapSays(t, ns, "sprocket-slow", "two")
}

func TestReconciler_ReadinessTimeoutWithRetryStrategyIsReportedNotRolledBack(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, widgetGVK, ns, "slow", map[string]any{"message": "one"})
	waitRevisions(t, ns, "widget-slow", "1:deployed")
	patchSpec(t, widgetGVK, ns, "slow", `{"deployment":true}`)
	waitRevisions(t, ns, "widget-slow", "1:superseded", "2:deployed")
	conditionSays(t, widgetGVK, ns, "slow", "Ready", metav1.ConditionFalse, status.ReasonReadinessTimeout,
		"Revision 2 was not Ready within remediation.readinessTimeout 2s", "Deployment/widget-slow")
	stays(t, widgetGVK, ns, "slow", 3*time.Second, "1:superseded", "2:deployed")

	// Ready at last: the timeout no longer matters.
	setDeploymentStatus(t, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widget-slow"}}, 1, 1)
	conditionSays(t, widgetGVK, ns, "slow", "Ready", metav1.ConditionTrue, status.ReasonReady)
}

func TestReconciler_FailedInstallIsUninstalledOrKeptAsThePolicySays(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, sprocketGVK, ns, "bad", map[string]any{"reject": true}) // installFailure: uninstall
	create(t, widgetGVK, ns, "bad", map[string]any{"reject": true})   // installFailure: keep (default)

	waitRevisions(t, ns, "widget-bad", "1:failed")
	conditionSays(t, widgetGVK, ns, "bad", "Released", metav1.ConditionFalse, status.ReasonInstallFailed, "not a valid key")

	testenv.Eventually(t, "the failed Sprocket install uninstalled", func() error {
		if err := conditionIs(get(t, sprocketGVK, ns, "bad"), "Released", metav1.ConditionFalse, ""); err != nil {
			return err
		}
		revs, err := revisions(ns, "sprocket-bad")
		if err != nil {
			return err
		}
		if len(revs) > 0 {
			return fmt.Errorf("revisions %v", revs)
		}
		return nil
	})
	// The second and last attempt, 10s later, fails and is uninstalled too.
	conditionSays(t, sprocketGVK, ns, "bad", "Released", metav1.ConditionFalse, status.ReasonRetriesExhausted, "Gave up after 2 failed tries")
	stays(t, sprocketGVK, ns, "bad", time.Second)
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sprocket-bad"}, &corev1.ConfigMap{}); client.IgnoreNotFound(err) != nil || err == nil {
		t.Errorf("the failed install's ConfigMap is still there (%v)", err)
	}
	waitRevisions(t, ns, "widget-bad", "1:failed")
}

// readyLabeled waits until rudder has labeled revision n of release Ready
// (stored.LabelReady), as it does once for a kind with a readiness timeout.
func readyLabeled(t *testing.T, ns, release string, n int) {
	t.Helper()
	testenv.Eventually(t, fmt.Sprintf("revision %d of %s labeled Ready", n, release), func() error {
		var s corev1.Secret
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("sh.helm.release.v1.%s.v%d", release, n)}, &s); err != nil {
			return err
		}
		if s.Labels[stored.LabelReady] != "true" {
			return fmt.Errorf("labels %v", s.Labels)
		}
		return nil
	})
}

// handUpgrade upgrades a release as `helm upgrade` run by hand does: the
// Helm SDK, no rudder labels of its own (Helm copies the previous revision's).
func handUpgrade(t *testing.T, ns, release string, values map[string]any) {
	t.Helper()
	chrt, err := helm.LoadChart(os.DirFS("testdata/charts"), "remedy")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := helmClient(t, ns).Upgrade(ctx, helm.Spec{Name: release, Chart: chrt, Values: values}); err != nil {
		t.Fatalf("helm upgrade by hand: %v", err)
	}
}

func handRollback(t *testing.T, ns, release string, to int) {
	t.Helper()
	if _, err := helmClient(t, ns).Rollback(ctx, release, helm.RollbackOptions{To: to}); err != nil {
		t.Fatalf("helm rollback by hand: %v", err)
	}
}

func helmClient(t *testing.T, ns string) *helm.Client {
	t.Helper()
	return helmClientOf(t, restCfg, ns)
}

// helmClientOf is helmClient talking through cfg.
func helmClientOf(t *testing.T, cfg *rest.Config, ns string) *helm.Client {
	t.Helper()
	g, err := helm.NewGetter(cfg, k8s.RESTMapper(), logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	c, err := g.For(helm.Access{Scope: helm.Scope{Namespace: ns}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestReconciler_OutOfBandUpgradeIsReverted(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, widgetGVK, ns, "hand", map[string]any{"message": "spec"})
	waitRevisions(t, ns, "widget-hand", "1:deployed")

	handUpgrade(t, ns, "widget-hand", map[string]any{"message": "by hand"})
	waitRevisions(t, ns, "widget-hand", "1:superseded", "2:superseded", "3:deployed")
	configMapSays(t, ns, "widget-hand", "spec")
	conditionSays(t, widgetGVK, ns, "hand", "OutOfBand", metav1.ConditionFalse, status.ReasonOutOfBandReplaced,
		"Revision 2 was written by another Helm client", "revision 3 serves now")
	conditionSays(t, widgetGVK, ns, "hand", "Released", metav1.ConditionTrue, status.ReasonUpgradeSucceeded)
	testenv.Eventually(t, "an OutOfBand event", func() error {
		var list eventsv1.EventList
		if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Reason == status.ReasonOutOfBand && strings.Contains(e.Note, "Revision 2") {
				return nil
			}
		}
		return fmt.Errorf("no event with reason %s among %d", status.ReasonOutOfBand, len(list.Items))
	})
	stays(t, widgetGVK, ns, "hand", time.Second, "1:superseded", "2:superseded", "3:deployed")
}

func TestReconciler_OutOfBandRevisionsAreKeptUntilTheSpecChanges(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, sprocketGVK, ns, "hand", map[string]any{"message": "spec"})
	waitRevisions(t, ns, "sprocket-hand", "1:deployed")

	readyLabeled(t, ns, "sprocket-hand", 1) // rudder's last write of revision 1, which a helm upgrade racing it would lose
	handUpgrade(t, ns, "sprocket-hand", map[string]any{"message": "by hand"})
	conditionSays(t, sprocketGVK, ns, "hand", "OutOfBand", metav1.ConditionTrue, status.ReasonOutOfBandKept,
		"Revision 2 was written by another Helm client", "Edit the spec")
	conditionSays(t, sprocketGVK, ns, "hand", "Released", metav1.ConditionUnknown, status.ReasonOutOfBand)
	stays(t, sprocketGVK, ns, "hand", 2*time.Second, "1:superseded", "2:deployed")
	configMapSays(t, ns, "sprocket-hand", "by hand")

	// A spec change: rudder deploys the spec over the hand-made revision.
	patchSpec(t, sprocketGVK, ns, "hand", `{"message":"new spec"}`)
	waitRevisions(t, ns, "sprocket-hand", "1:superseded", "2:superseded", "3:deployed")
	configMapSays(t, ns, "sprocket-hand", "new spec")
	conditionSays(t, sprocketGVK, ns, "hand", "OutOfBand", metav1.ConditionFalse, status.ReasonOutOfBandReplaced)

	// helm rollback by hand is told from rudder's revisions too, and kept.
	handRollback(t, ns, "sprocket-hand", 1)
	conditionSays(t, sprocketGVK, ns, "hand", "OutOfBand", metav1.ConditionTrue, status.ReasonOutOfBandKept,
		"Revision 4 was written by another Helm client", "Rollback to 1")
	stays(t, sprocketGVK, ns, "hand", 2*time.Second, "1:superseded", "2:superseded", "3:superseded", "4:deployed")
	configMapSays(t, ns, "sprocket-hand", "spec")
}
