package reconcile_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/internal/manager"
	"github.com/rudder-operator/rudder/test/testenv"
)

var (
	k8s       client.Client
	restCfg   *rest.Config
	webappGVK = schema.GroupVersionKind{Group: "webapp.my.domain", Version: "v1", Kind: "WebApp"}
	gadgetGVK = schema.GroupVersionKind{Group: "test.rudder.dev", Version: "v1", Kind: "Gadget"}
)

// TestMain runs the reconcile integration tests against a real kube-apiserver
// (envtest) and a real rudder manager serving the WebApp and Gadget kinds.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	env, cfg, err := testenv.Start("internal/reconcile/testdata/crd")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	restCfg = cfg
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme.Scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	log := testenv.Logger()
	ctrl.SetLogger(log)
	mgrCfg := rest.CopyConfig(cfg)
	mgrCfg.Wrap(managerRequests.wrap)
	mgr, err := manager.New(manager.Options{
		Config: mgrCfg, WatchesFile: "testdata/watches.yaml", MetricsAddr: "0", ProbeAddr: "0",
		Hooks: []hook.Hook{stamp},
	}, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return testenv.RunWithManager(m, mgr)
}

// cachesOn reports whether the suite's manager keeps its caches: make test
// runs the suite again with them off (manager.EnvNoCaches), where only what
// a cache saves may differ.
func cachesOn() bool {
	off, _ := strconv.ParseBool(os.Getenv(manager.EnvNoCaches))
	return !off
}

// namespace creates a namespace of its own for one test.
func namespace(t *testing.T) string {
	t.Helper()
	return testenv.Namespace(t, k8s, "rt-")
}

func get(t *testing.T, gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		t.Fatalf("get %s %s/%s: %v", gvk.Kind, ns, name, err)
	}
	return u
}
