package reconcile_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/testenv"
)

// An install told that storage holds no revision of its release (what the
// storage cache says when the reconciler plans an install) sends no list of
// the release's storage Secrets. When storage does hold one, as it would
// behind a cache that lags, creating revision 1 fails before any object is
// applied, and the stored revision stays as it was.
func TestHelmInstall_UnstoredListsNothingAndOverwritesNothing(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
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
	c := helmClientOf(t, cfg, ns)
	chrt, err := loader.Load("testdata/charts/remedy")
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

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
