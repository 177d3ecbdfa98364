package reconcile_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/reconcile/status"
)

// `helm uninstall --keep-history` leaves the newest revision uninstalled and
// none deployed. Under OutOfBand: revert (Widget) rudder installs the
// release again, numbering on; under keep (Sprocket) it leaves it so and
// says why, until the spec changes.
func TestReconciler_UninstallKeepHistoryByHand(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, widgetGVK, ns, "gone", map[string]any{"message": "spec"})
	create(t, sprocketGVK, ns, "gone", map[string]any{"message": "spec"})
	waitRevisions(t, ns, "widget-gone", "1:deployed")
	waitRevisions(t, ns, "sprocket-gone", "1:deployed")

	helmCLI(t, ns, "uninstall", "widget-gone", "--keep-history")
	waitRevisions(t, ns, "widget-gone", "1:superseded", "2:deployed")
	configMapSays(t, ns, "widget-gone", "spec")
	conditionSays(t, widgetGVK, ns, "gone", "Released", metav1.ConditionTrue, status.ReasonUpgradeSucceeded, "Revision 2 is deployed")

	helmCLI(t, ns, "uninstall", "sprocket-gone", "--keep-history")
	conditionSays(t, sprocketGVK, ns, "gone", "Released", metav1.ConditionFalse, status.ReasonOutOfBand,
		"Revision 1 was uninstalled by another Helm client", "outOfBand: keep")
	stays(t, sprocketGVK, ns, "gone", time.Second, "1:uninstalled")
	patchSpec(t, sprocketGVK, ns, "gone", `{"message":"new spec"}`)
	waitRevisions(t, ns, "sprocket-gone", "1:superseded", "2:deployed")
	configMapSays(t, ns, "sprocket-gone", "new spec")
}

// A release held on a rollback (rudder.dev/rollback-to) and then uninstalled
// by hand with its history kept once made rudder dereference a deployed
// revision that did not exist. It is installed again instead.
func TestReconciler_UninstallKeepHistoryOfARolledBackRelease(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, widgetGVK, ns, "held", map[string]any{"message": "one"})
	waitRevisions(t, ns, "widget-held", "1:deployed")
	patchSpec(t, widgetGVK, ns, "held", `{"message":"two"}`)
	waitRevisions(t, ns, "widget-held", "1:superseded", "2:deployed")
	ann := []byte(`{"metadata":{"annotations":{"rudder.dev/rollback-to":"1"}}}`)
	if err := k8s.Patch(ctx, get(t, widgetGVK, ns, "held"), client.RawPatch("application/merge-patch+json", ann)); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "widget-held", "1:superseded", "2:superseded", "3:deployed")
	conditionSays(t, widgetGVK, ns, "held", "Released", metav1.ConditionTrue, status.ReasonRolledBack)

	helmCLI(t, ns, "uninstall", "widget-held", "--keep-history")
	waitRevisions(t, ns, "widget-held", "1:superseded", "2:superseded", "3:superseded", "4:deployed")
	configMapSays(t, ns, "widget-held", "two")
}
