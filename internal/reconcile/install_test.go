package reconcile_test

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/test/testenv"
)

// An install told that storage holds no revision of its release (what the
// storage cache says when the reconciler plans an install) sends no list of
// the release's storage Secrets. When storage does hold one, as it would
// behind a cache that lags, creating revision 1 fails before any object is
// applied, and the stored revision stays as it was.
func TestHelmInstall_UnstoredListsNothingAndOverwritesNothing(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	cfg, lists := countingSecretLists()
	c := helmClientOf(t, cfg, ns)
	chrt, err := helm.LoadChart(os.DirFS("testdata/charts"), "remedy")
	if err != nil {
		t.Fatal(err)
	}
	install := func(message string) error {
		_, err := c.Install(ctx, helm.Spec{Name: "unstored", Chart: chrt, Values: map[string]any{"message": message}, Unstored: true})
		return err
	}

	if err := install("first"); err != nil {
		t.Fatalf("install: %v", err)
	}
	if n := lists.Load(); n != 0 {
		t.Errorf("the install listed storage Secrets %d times, want none", n)
	}
	if err := testenv.RevisionsAre(ctx, k8s, ns, "unstored", "1:deployed"); err != nil {
		t.Fatal(err)
	}

	err = install("second")
	if err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("an install over a stored revision 1: %v, want it refused because the revision exists", err)
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

// Helm's upgrade lists the release's history once, not once to find the
// newest revision and again to prune it to MaxHistory; pruning still keeps
// MaxHistory revisions, the deployed one among them. The revisions it only
// counted (outlines, not decoded) are never written: when the newest revision
// failed, the deployed one it supersedes is read whole, and every revision
// Helm's own storage reads afterwards is whole.
func TestHelmUpgrade_ListsHistoryOnce(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	cfg, lists := countingSecretLists()
	chrt, err := helm.LoadChart(os.DirFS("testdata/charts"), "remedy")
	if err != nil {
		t.Fatal(err)
	}
	spec := func(message string, reject bool) helm.Spec {
		return helm.Spec{Name: "pruned", Chart: chrt, Values: map[string]any{"message": message, "reject": reject}, MaxHistory: 3, Unstored: true}
	}
	if _, err := helmClientOf(t, cfg, ns).Install(ctx, spec("1", false)); err != nil {
		t.Fatalf("install: %v", err)
	}
	for _, message := range []string{"2", "3", "4", "5", "6"} {
		reject := message == "5" // revision 5 fails; 6 supersedes 4, the deployed one
		lists.Store(0)
		// A Client per action, as the reconciler makes one per reconcile.
		if _, err := helmClientOf(t, cfg, ns).Upgrade(ctx, spec(message, reject)); (err != nil) != reject {
			t.Fatalf("upgrade to %s: %v, want an error: %t", message, err, reject)
		}
		if n := lists.Load(); n != 1 {
			t.Errorf("the upgrade to %s listed storage Secrets %d times, want once", message, n)
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

// countingSecretLists returns a copy of the test's rest config that counts
// the LISTs of Secrets sent through it.
func countingSecretLists() (*rest.Config, *atomic.Int32) {
	var lists atomic.Int32
	cfg := rest.CopyConfig(restCfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/secrets") {
				lists.Add(1)
			}
			return rt.RoundTrip(req)
		})
	})
	return cfg, &lists
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
