package dropin

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/test/testenv"
)

var (
	cacheGVK     = schema.GroupVersionKind{Group: "dropin.rudder.dev", Version: "v1alpha1", Kind: "Cache"}
	guestbookGVK = schema.GroupVersionKind{Group: "dropin.rudder.dev", Version: "v1alpha1", Kind: "Guestbook"}
)

// TestCache_ServedAsAKind runs the single chart: its objects, named as the
// chart names them, with the spec's values, the optional PDB, no test hook;
// its CRD refusing a bad spec; and uninstall on delete.
func TestCache_ServedAsAKind(t *testing.T) {
	ns := namespace(t)
	cr := testenv.NewObject(cacheGVK, ns, "sessions", map[string]any{
		"replicaCount":        int64(2),
		"cache":               map[string]any{"maxMemory": "32mb"},
		"podDisruptionBudget": map[string]any{"enabled": true},
	})
	if err := k8s.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	const release = "cache-sessions" // the chart's fullname is the release name, which holds "cache"
	waitRevisions(t, ns, release, "1:deployed")
	waitCondition(t, cr, "Released", metav1.ConditionTrue)

	var dep appsv1.Deployment
	var cm corev1.ConfigMap
	objs := map[string]client.Object{
		"Deployment": &dep, "Service": &corev1.Service{}, "ConfigMap": &cm, "PodDisruptionBudget": &policyv1.PodDisruptionBudget{},
	}
	for kind, obj := range objs {
		getOwned(t, cr, kind, release, obj)
	}
	if *dep.Spec.Replicas != 2 || dep.Spec.Template.Spec.Containers[0].Image != "redis:7.2.5" {
		t.Errorf("Deployment replicas %d image %s, want 2 and the chart's appVersion", *dep.Spec.Replicas, dep.Spec.Template.Spec.Containers[0].Image)
	}
	if conf := cm.Data["redis.conf"]; !strings.Contains(conf, "maxmemory 32mb") || !strings.Contains(conf, "maxmemory-policy allkeys-lru") {
		t.Errorf("redis.conf holds neither the spec's value nor the default:\n%s", conf)
	}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: release + "-test-connection"}, &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("the chart's test hook Pod: %v, want not found (tests run only with helm test)", err)
	}

	// The CRD generated from the chart's values.schema.json refuses a value the chart does not take.
	err := k8s.Patch(ctx, cr.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"cache":{"evictionPolicy":"sometimes"}}}`)))
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.cache.evictionPolicy") {
		t.Errorf("patching evictionPolicy to \"sometimes\": %v, want Invalid naming spec.cache.evictionPolicy", err)
	}
	waitRevisions(t, ns, release, "1:deployed") // nothing reached Helm

	deleteAndWait(t, cr, release, objs)
}

// TestCache_CRDRefusesWhatTheSchemaRefuses creates (as a server-side dry run)
// Caches that break the chart's values.schema.json: the API server refuses
// each, naming the field, because the CRD was generated from that schema.
func TestCache_CRDRefusesWhatTheSchemaRefuses(t *testing.T) {
	if strings.Contains(manifestsOutput, "warning: chart cache") {
		t.Errorf("rudder manifests warned about the cache chart, whose schema converts whole:\n%s", manifestsOutput)
	}
	ns := namespace(t)
	tests := []struct {
		name      string
		spec      map[string]any
		wantField string // "" when the spec is valid
	}{
		{name: "valid", spec: map[string]any{"replicaCount": int64(3), "cache": map[string]any{"maxMemory": "1gb"}}},
		{name: "wrong type", spec: map[string]any{"replicaCount": "three"}, wantField: "spec.replicaCount"},
		{name: "below minimum", spec: map[string]any{"replicaCount": int64(-1)}, wantField: "spec.replicaCount"},
		{name: "above maximum", spec: map[string]any{"service": map[string]any{"port": int64(70000)}}, wantField: "spec.service.port"},
		{name: "not in enum", spec: map[string]any{"service": map[string]any{"type": "ExternalName"}}, wantField: "spec.service.type"},
		{name: "pattern", spec: map[string]any{"cache": map[string]any{"maxMemory": "lots"}}, wantField: "spec.cache.maxMemory"},
		{name: "too long", spec: map[string]any{"fullnameOverride": strings.Repeat("c", 64)}, wantField: "spec.fullnameOverride"},
		{name: "required in list item", spec: map[string]any{"imagePullSecrets": []any{map[string]any{}}}, wantField: "spec.imagePullSecrets[0].name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := k8s.Create(ctx, testenv.NewObject(cacheGVK, ns, "schema", tt.spec), client.DryRunAll)
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("a valid spec was refused: %v", err)
				}
				return
			}
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tt.wantField) {
				t.Fatalf("create: %v, want Invalid naming %s", err, tt.wantField)
			}
		})
	}
}

// TestGuestbook_OpenSpecWithWarning checks that a chart without a
// values.schema.json gets an open spec, and that `rudder manifests` says so.
func TestGuestbook_OpenSpecWithWarning(t *testing.T) {
	const want = "warning: chart guestbook has no values.schema.json: its CRD accepts any spec, unchecked"
	if !strings.Contains(manifestsOutput, want) {
		t.Errorf("rudder manifests printed\n%s\nwant a line starting %q", manifestsOutput, want)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := k8s.Get(ctx, client.ObjectKey{Name: "guestbooks." + guestbookGVK.Group}, &crd); err != nil {
		t.Fatal(err)
	}
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	if spec.XPreserveUnknownFields == nil || !*spec.XPreserveUnknownFields || len(spec.Properties) > 0 {
		t.Errorf("guestbook spec schema %+v, want an open object", spec)
	}
	cr := testenv.NewObject(guestbookGVK, namespace(t), "anything", map[string]any{"whatever": map[string]any{"the": "chart takes"}})
	if err := k8s.Create(ctx, cr, client.DryRunAll); err != nil {
		t.Errorf("an open spec refused a value: %v", err)
	}
}

// TestGuestbook_ServedAsAKind runs the umbrella chart: the subchart's objects
// and the objects named and labeled by the library chart's templates, the
// spec's subchart values (frontend.replicaCount) on install and on upgrade,
// and uninstall on delete.
func TestGuestbook_ServedAsAKind(t *testing.T) {
	ns := namespace(t)
	cr := testenv.NewObject(guestbookGVK, ns, "visitors", map[string]any{"frontend": map[string]any{"replicaCount": int64(3)}})
	if err := k8s.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	const release = "guestbook-visitors"
	waitRevisions(t, ns, release, "1:deployed")
	waitCondition(t, cr, "Released", metav1.ConditionTrue)

	var frontend, backend appsv1.Deployment
	var backendSvc corev1.Service
	objs := map[string]client.Object{ // by the subchart's own helpers, then by the library's
		"Deployment/frontend": &frontend, "Service/frontend": &corev1.Service{},
		"Deployment/backend": &backend, "Service/backend": &backendSvc,
	}
	for ref, obj := range objs {
		kind, component, _ := strings.Cut(ref, "/")
		getOwned(t, cr, kind, release+"-"+component, obj)
	}
	if *frontend.Spec.Replicas != 3 {
		t.Errorf("frontend replicas %d, want the spec's 3 (the umbrella's default is 2, the subchart's 1)", *frontend.Spec.Replicas)
	}
	if env := frontend.Spec.Template.Spec.Containers[0].Env; !slices.Contains(env, corev1.EnvVar{Name: "REDIS_LEADER_SERVICE_HOST", Value: release + "-backend"}) {
		t.Errorf("frontend env %v does not point at the backend Service", env)
	}
	wantLabels := map[string]string{ // common.labels.standard
		"app.kubernetes.io/name": "guestbook", "app.kubernetes.io/instance": release, "app.kubernetes.io/component": "backend",
		"app.kubernetes.io/part-of": "guestbook", "app.kubernetes.io/managed-by": "Helm", "helm.sh/chart": "guestbook-0.5.0",
	}
	for _, obj := range []client.Object{&backend, &backendSvc} {
		for k, v := range wantLabels {
			if obj.GetLabels()[k] != v {
				t.Errorf("%s label %s = %q, want %q from the library chart", obj.GetName(), k, obj.GetLabels()[k], v)
			}
		}
	}

	patch(t, cr, `{"spec":{"frontend":{"replicaCount":1}}}`)
	waitRevisions(t, ns, release, "1:superseded", "2:deployed")
	testenv.Eventually(t, "frontend scaled by the spec", func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(&frontend), &frontend); err != nil {
			return err
		}
		if *frontend.Spec.Replicas != 1 {
			return fmt.Errorf("frontend replicas %d, want 1", *frontend.Spec.Replicas)
		}
		return nil
	})

	deleteAndWait(t, cr, release, objs)
}

// namespace creates a namespace of its own for one test.
func namespace(t *testing.T) string {
	t.Helper()
	return testenv.Namespace(t, k8s, "dropin-")
}

func patch(t *testing.T, cr *unstructured.Unstructured, body string) {
	t.Helper()
	if err := k8s.Patch(ctx, cr.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(body))); err != nil {
		t.Fatal(err)
	}
}

func waitRevisions(t *testing.T, ns, release string, want ...string) {
	t.Helper()
	testenv.Eventually(t, fmt.Sprintf("release %s revisions %v", release, want), func() error {
		got, err := testenv.Revisions(ctx, k8s, ns, release)
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("revisions %v", got)
		}
		return nil
	})
}

// condition reads a condition of the custom resource as it is now.
func condition(cr *unstructured.Unstructured, typ string) (*metav1.Condition, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(cr.GroupVersionKind())
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(cr), u); err != nil {
		return nil, err
	}
	c := testenv.Condition(u, typ)
	if c == nil {
		return nil, fmt.Errorf("no %s condition (status: %v)", typ, u.Object["status"])
	}
	return c, nil
}

func waitCondition(t *testing.T, cr *unstructured.Unstructured, typ string, status metav1.ConditionStatus) {
	t.Helper()
	testenv.Eventually(t, fmt.Sprintf("%s %s", typ, status), func() error {
		c, err := condition(cr, typ)
		if err != nil {
			return err
		}
		if c.Status != status {
			return fmt.Errorf("%s = %s/%s (%q)", typ, c.Status, c.Reason, c.Message)
		}
		return nil
	})
}

// getOwned reads the object kind/name of cr's namespace into obj and checks
// that rudder made cr its controller.
func getOwned(t *testing.T, cr *unstructured.Unstructured, kind, name string, obj client.Object) {
	t.Helper()
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: cr.GetNamespace(), Name: name}, obj); err != nil {
		t.Fatalf("%s %s: %v", kind, name, err)
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(cr.GroupVersionKind())
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(cr), live); err != nil {
		t.Fatal(err)
	}
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.UID != live.GetUID() || ref.Kind != cr.GetKind() || ref.APIVersion != cr.GetAPIVersion() {
		t.Errorf("%s %s controller reference %v, want the %s", kind, name, ref, cr.GetKind())
	}
}

// deleteAndWait deletes cr and waits until it, its release and objs are gone.
func deleteAndWait(t *testing.T, cr *unstructured.Unstructured, release string, objs map[string]client.Object) {
	t.Helper()
	if err := k8s.Delete(ctx, cr.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, cr.GetNamespace(), release)
	testenv.Eventually(t, cr.GetKind()+" and its objects gone", func() error {
		var errs []error
		for ref, obj := range objs {
			errs = append(errs, gone(ref, k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj)))
		}
		errs = append(errs, gone(cr.GetKind(), k8s.Get(ctx, client.ObjectKeyFromObject(cr), cr.DeepCopy())))
		return errors.Join(errs...)
	})
}

// gone turns the error of a Get of what into nil when it is not found.
func gone(what string, err error) error {
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err == nil:
		return fmt.Errorf("%s: still there", what)
	default:
		return fmt.Errorf("%s: %w", what, err)
	}
}
