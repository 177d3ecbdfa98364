package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	"github.com/rudder-operator/rudder"
	"github.com/rudder-operator/rudder/internal/manager"
	"github.com/rudder-operator/rudder/internal/preview"
	"github.com/rudder-operator/rudder/internal/watches"
	"github.com/rudder-operator/rudder/test/testenv"
)

var (
	cfg *rest.Config
	k8s client.Client
)

var (
	webAppGVK   = schema.GroupVersionKind{Group: "webapp.my.domain", Version: "v1", Kind: "WebApp"}
	databaseGVK = schema.GroupVersionKind{Group: "database.my.domain", Version: "v1", Kind: "Database"}
)

// TestMain runs the webhook's previews against a real API server (envtest,
// rudder's CRDs). No manager runs: a preview needs none.
func TestMain(m *testing.M) {
	env, c, err := testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg = c
	code := func() int {
		if k8s, err = client.New(cfg, client.Options{Scheme: scheme.Scheme}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		ctrl.SetLogger(testenv.Logger())
		return m.Run()
	}()
	_ = env.Stop()
	os.Exit(code)
}

// request is the admission request of op on obj, as the API server sends it.
// An update's old object is the WebApp before it: old, else a WebApp of
// another image.
func request(t *testing.T, op admissionv1.Operation, sub string, obj, old *unstructured.Unstructured) admission.Request {
	t.Helper()
	raw, err := obj.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	gvk := obj.GroupVersionKind()
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: op, SubResource: sub, Namespace: obj.GetNamespace(), Name: obj.GetName(),
		Kind:   metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
		Object: runtime.RawExtension{Raw: raw},
	}}
	if op == admissionv1.Update {
		if old == nil {
			old = webApp(obj.GetNamespace(), obj.GetName(), map[string]any{"image": "nginx:1.24"})
		}
		if req.OldObject.Raw, err = old.MarshalJSON(); err != nil {
			t.Fatal(err)
		}
	}
	return req
}

func handler(t *testing.T, ws []watches.Watch, budget time.Duration) *Handler {
	t.Helper()
	p, err := preview.New(preview.Options{Config: cfg, Watches: ws})
	if err != nil {
		t.Fatal(err)
	}
	return &Handler{Preview: p, Budget: budget, Log: testenv.Logger()}
}

func webApp(ns, name string, spec map[string]any) *unstructured.Unstructured {
	s := map[string]any{"image": "nginx:1.25", "port": int64(80), "replicas": int64(1)}
	for k, v := range spec {
		s[k] = v
	}
	return testenv.NewObject(webAppGVK, ns, name, s)
}

func TestHandler_Handle(t *testing.T) {
	ctx := context.Background()
	ns := testenv.Namespace(t, k8s, "admission-")
	// Ingresses are refused in ns: a WebApp that enables one would fail.
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-ingress"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/ingresses.networking.k8s.io": resource.MustParse("0")}}}
	if err := k8s.Create(ctx, quota); err != nil {
		t.Fatal(err)
	}
	// envtest runs no quota controller: its status is written as it would.
	quota.Status = corev1.ResourceQuotaStatus{Hard: quota.Spec.Hard,
		Used: corev1.ResourceList{"count/ingresses.networking.k8s.io": resource.MustParse("0")}}
	if err := k8s.Status().Update(ctx, quota); err != nil {
		t.Fatal(err)
	}
	builtin, err := watches.Load(rudder.Files, rudder.WatchesFile)
	if err != nil {
		t.Fatal(err)
	}
	refusing, err := watches.LoadFile("testdata/watches.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ingress := map[string]any{"ingress": map[string]any{"enabled": true, "host": "shop.example.com"}}
	tests := []struct {
		name    string
		watches []watches.Watch
		budget  time.Duration
		op      admissionv1.Operation
		sub     string
		obj     *unstructured.Unstructured
		old     *unstructured.Unstructured
		serves  func(*unstructured.Unstructured) bool
		allowed bool
		// reason and warning are parts of the denial's message and of the
		// warnings; "" for none.
		reason, warning string
	}{
		{name: "a new WebApp that renders and dry-runs is allowed", watches: builtin, budget: 10 * time.Second,
			op: admissionv1.Create, obj: webApp(ns, "shop", nil), allowed: true},
		{name: "an ordinary change is allowed", watches: builtin, budget: 10 * time.Second,
			op: admissionv1.Update, obj: webApp(ns, "shop", map[string]any{"image": "nginx:1.26", "replicas": int64(2)}), allowed: true},
		{name: "an object the API server refuses is denied with its reason, naming the object", watches: builtin, budget: 10 * time.Second,
			op: admissionv1.Update, obj: webApp(ns, "shop", ingress),
			reason: fmt.Sprintf(`the API server refuses networking.k8s.io/v1 Ingress %s/shop: ingresses.networking.k8s.io "shop" is forbidden: exceeded quota: no-ingress`, ns)},
		{name: "a chart that does not render is denied with the template error", watches: refusing, budget: 10 * time.Second,
			op: admissionv1.Create, obj: webApp(ns, "latest", map[string]any{"image": "nginx:latest"}),
			reason: "image nginx:latest is refused: pin a version"},
		{name: "a preview over the budget is allowed with a warning", watches: builtin, budget: time.Nanosecond,
			op: admissionv1.Update, obj: webApp(ns, "shop", ingress), allowed: true,
			warning: "took longer than 1ns; allowed unchecked"},
		{name: "a status update is allowed unchecked", watches: builtin, budget: 10 * time.Second,
			op: admissionv1.Update, sub: "status", obj: webApp(ns, "shop", ingress), allowed: true},
		{name: "a delete is allowed unchecked", watches: builtin, budget: 10 * time.Second,
			op: admissionv1.Delete, obj: webApp(ns, "shop", ingress), allowed: true},
		{name: "a change of metadata alone is allowed unchecked", watches: builtin, budget: 10 * time.Second,
			op: admissionv1.Update, obj: withFinalizer(webApp(ns, "shop", ingress)), old: webApp(ns, "shop", ingress), allowed: true},
		{name: "a resource being deleted is allowed unchecked", watches: builtin, budget: 10 * time.Second,
			op: admissionv1.Update, obj: deleting(webApp(ns, "shop", ingress)), allowed: true},
		{name: "a resource another manager serves is allowed unchecked", watches: builtin, budget: 10 * time.Second,
			op: admissionv1.Update, obj: webApp(ns, "shop", ingress), allowed: true,
			serves: func(*unstructured.Unstructured) bool { return false }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := handler(t, tt.watches, tt.budget)
			h.Serves = tt.serves
			resp := h.Handle(ctx, request(t, tt.op, tt.sub, tt.obj, tt.old))
			msg := ""
			if resp.Result != nil {
				msg = resp.Result.Message
			}
			if resp.Allowed != tt.allowed {
				t.Fatalf("allowed = %t, want %t; message %q, warnings %q", resp.Allowed, tt.allowed, msg, resp.Warnings)
			}
			if tt.reason != "" && !strings.Contains(msg, tt.reason) {
				t.Errorf("denial message %q: want it to contain %q", msg, tt.reason)
			}
			warnings := strings.Join(resp.Warnings, "\n")
			if (tt.warning == "") != (warnings == "") || !strings.Contains(warnings, tt.warning) {
				t.Errorf("warnings %q: want %q", warnings, tt.warning)
			}
		})
	}
}

func withFinalizer(obj *unstructured.Unstructured) *unstructured.Unstructured {
	obj.SetFinalizers([]string{"rudder.dev/release"})
	return obj
}

func deleting(obj *unstructured.Unstructured) *unstructured.Unstructured {
	now := metav1.Now()
	obj.SetDeletionTimestamp(&now)
	return withFinalizer(obj)
}

// The webhook makes nothing: a Database's hooks, which would create its
// password Secret and its backup claim, run against a dry-run client.
func TestHandler_Handle_makesNothing(t *testing.T) {
	ctx := context.Background()
	ns := testenv.Namespace(t, k8s, "admission-hooks-")
	builtin, err := watches.Load(rudder.Files, rudder.WatchesFile)
	if err != nil {
		t.Fatal(err)
	}
	db := testenv.NewObject(databaseGVK, ns, "orders", map[string]any{"version": "16", "storageSize": "1Gi", "replicas": int64(1),
		"database": "orders", "backup": map[string]any{"enabled": true, "schedule": "0 2 * * *", "storageSize": "1Gi", "retention": int64(7)}})
	resp := handler(t, builtin, 10*time.Second).Handle(ctx, request(t, admissionv1.Create, "", db, nil))
	if !resp.Allowed || len(resp.Warnings) > 0 {
		t.Fatalf("a new Database: allowed %t, warnings %q, result %+v; want allowed without warnings", resp.Allowed, resp.Warnings, resp.Result)
	}
	for _, list := range []client.ObjectList{&corev1.SecretList{}, &corev1.PersistentVolumeClaimList{}, &corev1.ConfigMapList{}} {
		if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		items, _ := json.Marshal(list)
		if n := len(mustItems(t, list)); n > 0 {
			// kube-root-ca.crt is the namespace's own ConfigMap.
			if _, ok := list.(*corev1.ConfigMapList); !ok || n > 1 {
				t.Errorf("the webhook made objects in namespace %s: %s", ns, items)
			}
		}
	}
}

func mustItems(t *testing.T, list client.ObjectList) []runtime.Object {
	t.Helper()
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// TestConfiguration is the URL mode's configuration: create and update of
// each kind rudder serves, never delete nor status, failurePolicy Ignore, a
// short timeout, the manager's namespaces. The API server takes it.
func TestConfiguration(t *testing.T) {
	ctx := context.Background()
	builtin, err := watches.Load(rudder.Files, rudder.WatchesFile)
	if err != nil {
		t.Fatal(err)
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	vwc, err := Configuration("rudder-test", "https://localhost:9443"+Path, manager.Served{Watches: builtin, Namespaces: []string{"team-a"}}, mapper, DefaultBudget)
	if err != nil {
		t.Fatal(err)
	}
	checkConfiguration(t, vwc, len(builtin))
	if got := vwc.Webhooks[0].NamespaceSelector.MatchExpressions[0].Values; len(got) != 1 || got[0] != "team-a" {
		t.Errorf("namespaceSelector values %q, want [team-a]", got)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := applyConfiguration(ctx, c, vwc.DeepCopy()); err != nil {
		t.Fatalf("creating: %v", err)
	}
	// The CA bundle the rotator injected survives the manager's next start.
	live := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(vwc), live); err != nil {
		t.Fatal(err)
	}
	live.Webhooks[0].ClientConfig.CABundle = []byte("injected")
	if err := c.Update(ctx, live); err != nil {
		t.Fatal(err)
	}
	if err := applyConfiguration(ctx, c, vwc.DeepCopy()); err != nil {
		t.Fatalf("updating: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(vwc), live); err != nil {
		t.Fatal(err)
	}
	if string(live.Webhooks[0].ClientConfig.CABundle) != "injected" {
		t.Errorf("caBundle %q after the update, want the injected one kept", live.Webhooks[0].ClientConfig.CABundle)
	}
}

// TestConfiguration_deployed checks config/webhook's configuration as
// TestConfiguration checks URL mode's.
func TestConfiguration_deployed(t *testing.T) {
	root, err := testenv.Root()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(root + "/config/webhook/manifests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := yaml.UnmarshalStrict(data, vwc); err != nil {
		t.Fatalf("config/webhook/manifests.yaml: %v", err)
	}
	builtin, err := watches.Load(rudder.Files, rudder.WatchesFile)
	if err != nil {
		t.Fatal(err)
	}
	checkConfiguration(t, vwc, len(builtin))
	for _, w := range builtin {
		found := false
		for _, r := range vwc.Webhooks[0].Rules {
			found = found || len(r.APIGroups) == 1 && r.APIGroups[0] == w.GVK.Group && len(r.APIVersions) == 1 && r.APIVersions[0] == w.GVK.Version
		}
		if !found {
			t.Errorf("config/webhook/manifests.yaml: no rule for kind %s (%s); add one", w.GVK.Kind, w.GVK.GroupVersion())
		}
	}
}

func checkConfiguration(t *testing.T, vwc *admissionregistrationv1.ValidatingWebhookConfiguration, kinds int) {
	t.Helper()
	if len(vwc.Webhooks) != 1 {
		t.Fatalf("%d webhooks, want 1", len(vwc.Webhooks))
	}
	wh := vwc.Webhooks[0]
	if len(wh.Rules) != kinds {
		t.Errorf("%d rules, want one per kind rudder serves, %d", len(wh.Rules), kinds)
	}
	for _, r := range wh.Rules {
		if len(r.Operations) != 2 || r.Operations[0] != admissionregistrationv1.Create || r.Operations[1] != admissionregistrationv1.Update {
			t.Errorf("rule %v: operations %v, want [CREATE UPDATE]: never DELETE", r.Resources, r.Operations)
		}
		for _, res := range r.Resources {
			if strings.Contains(res, "/") || res == "*" {
				t.Errorf("rule resource %q: want the kind's resource alone, no subresource (status)", res)
			}
		}
	}
	if wh.FailurePolicy == nil || *wh.FailurePolicy != admissionregistrationv1.Ignore {
		t.Errorf("failurePolicy %v, want Ignore: a stopped manager must not block the API", wh.FailurePolicy)
	}
	if wh.TimeoutSeconds == nil || *wh.TimeoutSeconds != TimeoutSeconds(DefaultBudget) {
		t.Errorf("timeoutSeconds %v, want %d", wh.TimeoutSeconds, TimeoutSeconds(DefaultBudget))
	}
	if wh.SideEffects == nil || *wh.SideEffects != admissionregistrationv1.SideEffectClassNone {
		t.Errorf("sideEffects %v, want None", wh.SideEffects)
	}
}
