package kinds_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder"
	"github.com/rudder-operator/rudder/internal/manager"
	"github.com/rudder-operator/rudder/internal/watches"
	"github.com/rudder-operator/rudder/test/testenv"
)

var (
	ctx        = context.Background()
	k8s        client.Client
	root       string
	networkGVK = schema.GroupVersionKind{Group: "samplecrd.k8s.io", Version: "v1", Kind: "Network"}
)

// TestMain starts envtest with every CRD of config/crd/bases and a real rudder
// manager on the watches.yaml and charts embedded in the binary, running with
// only the permissions of config/rbac (asDeployedRole).
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if root, err = testenv.Root(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env, cfg, err := testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme.Scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	log := testenv.Logger()
	ctrl.SetLogger(log)
	asRudder, err := asDeployedRole(ctx, k8s, cfg, root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ownNamespace, err := bindNamespacedRole(ctx, k8s, root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mgr, err := manager.New(manager.Options{Config: asRudder, MetricsAddr: "0", ProbeAddr: "0", LeaderElectionNamespace: ownNamespace}, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return testenv.RunWithManager(m, mgr)
}

func TestNetwork_SeedSample(t *testing.T) {
	ns := namespace(t)
	objs := readManifests(t, filepath.Join(root, "config", "samples", "network_v1_network.yaml"))
	if len(objs) != 1 || objs[0].GroupVersionKind() != networkGVK || objs[0].GetName() != "example-network" {
		t.Fatalf("sample holds %d objects, want one Network example-network", len(objs))
	}
	cr := objs[0]
	cr.SetNamespace(ns)
	if err := k8s.Create(ctx, cr); err != nil {
		t.Fatalf("create: %v", err)
	}
	const release = "network-example-network"

	testenv.Eventually(t, "release revision 1 deployed", func() error {
		return revisionsAre(ns, release, "1:deployed")
	})
	testenv.Eventually(t, "ConfigMap example-network", func() error {
		return configMapHas(ns, "example-network", map[string]string{
			"cidr": "192.168.0.0/16", "gateway": "192.168.0.1",
			"ipFamily": "IPv4", "prefixLength": "16", "netmask": "255.255.0.0",
		})
	})
	testenv.Eventually(t, "status after install", func() error {
		return statusIs(ns, "example-network", 1, map[string]any{
			"phase": "Running", "release.name": release, "release.revision": 1,
			"release.chart": "network", "release.status": "deployed",
		})
	})

	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"gateway":"192.168.0.254"}}`))
	if err := k8s.Patch(ctx, networkRef(ns, "example-network"), patch); err != nil {
		t.Fatalf("modify: %v", err)
	}
	testenv.Eventually(t, "release revision 2 deployed", func() error {
		return revisionsAre(ns, release, "1:superseded", "2:deployed")
	})
	testenv.Eventually(t, "ConfigMap example-network updated", func() error {
		return configMapHas(ns, "example-network", map[string]string{"cidr": "192.168.0.0/16", "gateway": "192.168.0.254"})
	})
	testenv.Eventually(t, "status after modify", func() error {
		return statusIs(ns, "example-network", 2, map[string]any{"phase": "Running", "release.revision": 2})
	})

	if err := k8s.Delete(ctx, networkRef(ns, "example-network")); err != nil {
		t.Fatalf("delete: %v", err)
	}
	testenv.Eventually(t, "Network gone", func() error {
		return testenv.Gone(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "example-network"}, networkRef(ns, "")))
	})
	testenv.Eventually(t, "release gone", func() error { return revisionsAre(ns, release) })
	testenv.Eventually(t, "ConfigMap gone", func() error {
		return testenv.Gone(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "example-network"}, &corev1.ConfigMap{}))
	})
}

func TestNetwork_Validation(t *testing.T) {
	ns := namespace(t)
	tests := []struct {
		name string
		spec map[string]any
		// wantErr holds parts of the API server's message; none means accepted.
		wantErr []string
	}{
		{name: "seed", spec: map[string]any{"cidr": "192.168.0.0/16", "gateway": "192.168.0.1"}},
		{name: "ipv6", spec: map[string]any{"cidr": "fd00::/64", "gateway": "fd00::1"}},
		{name: "single address", spec: map[string]any{"cidr": "10.0.0.1/32", "gateway": "10.0.0.1"}},
		{
			name: "cidr not a cidr", spec: map[string]any{"cidr": "banana", "gateway": "192.168.0.1"},
			wantErr: []string{"spec.cidr: Invalid value", "spec.cidr must be an IPv4 or IPv6 CIDR"},
		},
		{
			name: "prefix too long", spec: map[string]any{"cidr": "192.168.0.0/33", "gateway": "192.168.0.1"},
			wantErr: []string{"spec.cidr: Invalid value", "spec.cidr must be an IPv4 or IPv6 CIDR"},
		},
		{
			name: "gateway outside cidr", spec: map[string]any{"cidr": "192.168.0.0/16", "gateway": "10.0.0.1"},
			wantErr: []string{"spec.gateway: Invalid value", "spec.gateway must be an address inside spec.cidr"},
		},
		{
			name: "gateway of the other family", spec: map[string]any{"cidr": "fd00::/64", "gateway": "192.168.0.1"},
			wantErr: []string{"spec.gateway: Invalid value", "spec.gateway must be an address inside spec.cidr"},
		},
		{
			name: "gateway not an ip", spec: map[string]any{"cidr": "192.168.0.0/16", "gateway": "not-an-ip"},
			wantErr: []string{"spec.gateway: Invalid value", "spec.gateway must be an IPv4 or IPv6 address"},
		},
		{
			name: "cidr missing", spec: map[string]any{"gateway": "192.168.0.1"},
			wantErr: []string{"spec.cidr: Required value"},
		},
		{
			name: "gateway missing", spec: map[string]any{"cidr": "192.168.0.0/16"},
			wantErr: []string{"spec.gateway: Required value"},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cr := networkRef(ns, fmt.Sprintf("net-%d", i))
			cr.Object["spec"] = tt.spec
			err := k8s.Create(ctx, cr)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted, want rejected")
			}
			t.Logf("API server: %v", err)
			if !apierrors.IsInvalid(err) {
				t.Errorf("error is %v, want Invalid", apierrors.ReasonForError(err))
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			// One message per mistake: a guarded rule must not add a CEL runtime error.
			if strings.Contains(err.Error(), "evaluation error") || strings.Contains(err.Error(), "no such key") {
				t.Errorf("error %q holds a CEL evaluation error", err)
			}
		})
	}
}

func TestSamples_ApplyAndInstall(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "config", "samples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return filepath.Base(f) == "kustomization.yaml" })
	if len(files) == 0 {
		t.Fatal("no samples in config/samples")
	}
	ws, err := watches.Load(rudder.Files, rudder.WatchesFile)
	if err != nil {
		t.Fatal(err)
	}
	served := map[schema.GroupVersionKind]bool{}
	for _, w := range ws {
		served[w.GVK] = true
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			// A namespace of its own: a sample naming "default" would
			// otherwise share it with every other test.
			ns := namespace(t)
			objs := readManifests(t, file)
			if len(objs) == 0 {
				t.Fatal("no objects in the sample")
			}
			for _, obj := range objs {
				if !served[obj.GroupVersionKind()] {
					t.Fatalf("%s %s: no entry of the embedded watches.yaml serves %s", obj.GetKind(), obj.GetName(), obj.GroupVersionKind())
				}
			}
			for _, obj := range objs {
				obj.SetNamespace(ns)
				if err := k8s.Create(ctx, obj); err != nil {
					t.Fatalf("create %s %s: %v", obj.GetKind(), obj.GetName(), err)
				}
			}
			// No controller-manager runs in envtest, so a Deployment never
			// becomes available: check the release only, not readiness.
			for _, obj := range objs {
				release := strings.ToLower(obj.GetKind()) + "-" + obj.GetName()
				testenv.Eventually(t, "release "+release+" deployed", func() error {
					return revisionsAre(ns, release, "1:deployed")
				})
				testenv.Eventually(t, obj.GetKind()+" Released", func() error {
					u := &unstructured.Unstructured{}
					u.SetGroupVersionKind(obj.GroupVersionKind())
					if err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), u); err != nil {
						return err
					}
					return conditionTrue(u, "Released")
				})
			}
		})
	}
}

// namespace creates a namespace of its own for one test.
func namespace(t *testing.T) string {
	t.Helper()
	return testenv.Namespace(t, k8s, "kinds-")
}

// readManifests decodes every object of a YAML file of one or more documents.
func readManifests(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	dec := yaml.NewYAMLOrJSONDecoder(f, 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(m) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
}

func networkRef(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(networkGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// revisionsAre checks the revisions Helm stored for a release, as
// "<revision>:<status>" in any order; none means the release is gone.
func revisionsAre(ns, release string, want ...string) error {
	return testenv.RevisionsAre(ctx, k8s, ns, release, want...)
}

func configMapHas(ns, name string, want map[string]string) error {
	var cm corev1.ConfigMap
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cm); err != nil {
		return err
	}
	for k, v := range want {
		if cm.Data[k] != v {
			return fmt.Errorf("ConfigMap %s data %v, want %s=%q", name, cm.Data, k, v)
		}
	}
	if got := cm.Labels["app.kubernetes.io/instance"]; got != name {
		return fmt.Errorf("ConfigMap %s label app.kubernetes.io/instance %q, want %q", name, got, name)
	}
	return nil
}

// statusIs checks a Network's status: observedGeneration, the fields of want
// (dotted paths under .status) and both conditions True at that generation.
func statusIs(ns, name string, generation int64, want map[string]any) error {
	u := networkRef(ns, name)
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
		return err
	}
	if u.GetGeneration() != generation {
		return fmt.Errorf("generation %d, want %d", u.GetGeneration(), generation)
	}
	want["observedGeneration"] = generation
	for field, v := range want {
		got, _, _ := unstructured.NestedFieldNoCopy(u.Object, append([]string{"status"}, strings.Split(field, ".")...)...)
		if fmt.Sprint(got) != fmt.Sprint(v) {
			return fmt.Errorf("status.%s = %v, want %v (status: %v)", field, got, v, u.Object["status"])
		}
	}
	for _, typ := range []string{"Released", "Ready"} {
		if err := conditionTrue(u, typ); err != nil {
			return err
		}
	}
	return nil
}

// conditionTrue checks that a condition is True and set from the object's
// current generation.
func conditionTrue(u *unstructured.Unstructured, typ string) error {
	c := testenv.Condition(u, typ)
	switch {
	case c == nil:
		return fmt.Errorf("no %s condition (status: %v)", typ, u.Object["status"])
	case c.Status != metav1.ConditionTrue:
		return fmt.Errorf("%s = %s/%s (%q), want True", typ, c.Status, c.Reason, c.Message)
	case c.ObservedGeneration != u.GetGeneration():
		return fmt.Errorf("%s observedGeneration %d, want %d", typ, c.ObservedGeneration, u.GetGeneration())
	}
	return nil
}
