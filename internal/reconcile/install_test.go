package reconcile_test

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/test/testenv"
)

// An install over a stored revision 1 (what a storage cache that lags would
// plan) fails before any object is applied, and the stored revision stays as
// it was.
func TestHelmInstall_OverAStoredRevisionOverwritesNothing(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	c := helmClientOf(t, restCfg, ns)
	chrt, err := helm.LoadChart(os.DirFS("testdata/charts"), "remedy")
	if err != nil {
		t.Fatal(err)
	}
	install := func(message string) error {
		_, err := c.Install(ctx, helm.Spec{Name: "unstored", Chart: chrt, Values: map[string]any{"message": message}})
		return err
	}

	if err := install("first"); err != nil {
		t.Fatalf("install: %v", err)
	}
	if err := testenv.RevisionsAre(ctx, k8s, ns, "unstored", "1:deployed"); err != nil {
		t.Fatal(err)
	}

	err = install("second")
	if err == nil || !strings.Contains(err.Error(), "cannot reuse a name that is still in use") {
		t.Fatalf("an install over a stored revision 1: %v, want it refused because the name is in use", err)
	}
	var cm corev1.ConfigMap
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "unstored"}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["message"] != "first" {
		t.Errorf("ConfigMap message %q after the refused install, want the first install's", cm.Data["message"])
	}
	if err := testenv.RevisionsAre(ctx, k8s, ns, "unstored", "1:deployed"); err != nil {
		t.Error(err)
	}
}

// Helm's upgrade prunes the history to MaxHistory revisions, the deployed one
// among them, and every revision it leaves is whole: its values, chart and
// manifest.
func TestHelmUpgrade_PrunesToMaxHistory(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	chrt, err := helm.LoadChart(os.DirFS("testdata/charts"), "remedy")
	if err != nil {
		t.Fatal(err)
	}
	spec := func(message string, reject bool) helm.Spec {
		return helm.Spec{Name: "pruned", Chart: chrt, Values: map[string]any{"message": message, "reject": reject}, MaxHistory: 3}
	}
	if _, err := helmClientOf(t, restCfg, ns).Install(ctx, spec("1", false)); err != nil {
		t.Fatalf("install: %v", err)
	}
	for _, message := range []string{"2", "3", "4", "5", "6"} {
		reject := message == "5" // revision 5 fails; 6 supersedes 4, the deployed one
		// A Client per action, as the reconciler makes one per reconcile.
		if _, err := helmClientOf(t, restCfg, ns).Upgrade(ctx, spec(message, reject)); (err != nil) != reject {
			t.Fatalf("upgrade to %s: %v, want an error: %t", message, err, reject)
		}
	}
	if err := testenv.RevisionsAre(ctx, k8s, ns, "pruned", "4:superseded", "5:failed", "6:deployed"); err != nil {
		t.Error(err)
	}
	history, err := helmStore(t, ns).History("pruned")
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range history {
		if want := strconv.Itoa(rel.Version); rel.Config["message"] != want || !strings.Contains(rel.Manifest, "kind: ConfigMap") || rel.Chart == nil {
			t.Errorf("revision %d as Helm reads it: values %v, chart %t, manifest %q; want it whole, with message %s", rel.Version, rel.Config, rel.Chart != nil, rel.Manifest, want)
		}
	}
	var cm corev1.ConfigMap
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pruned"}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["message"] != "6" {
		t.Errorf("ConfigMap message %q, want the last upgrade's", cm.Data["message"])
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
