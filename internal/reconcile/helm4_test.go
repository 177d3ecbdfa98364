package reconcile_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/test/testenv"
)

// The regressions Helm 4 is known to have had, each guarded here against
// the real reconciler (testdata/charts/gadget's templates/helm4.yaml).

// configMapData waits for ConfigMap ns/name and returns its data.
func configMapData(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	var cm corev1.ConfigMap
	testenv.Eventually(t, "ConfigMap "+name, func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cm)
	})
	return cm.Data
}

// Post-rendered YAML keeps a block scalar's final newline and its empty
// lines (Flux helm-controller #1448, #1542), and a document separator inside
// a ConfigMap's data does not split the document.
func TestHelm4_PostRenderKeepsBlockScalarsAndSeparators(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, gadgetGVK, ns, "scalars", map[string]any{"scalars": true})
	waitRevisions(t, ns, "gadget-scalars", "1:deployed")
	data := configMapData(t, ns, "gadget-scalars-scalars")
	for key, want := range map[string]string{"script": "line one\n\nline three\n", "doc": "a: 1\n---\nb: 2\n"} {
		if data[key] != want {
			t.Errorf("data.%s = %q, want %q", key, data[key], want)
		}
	}
}

// A hook goes through the scope check as the release's objects do: one in
// the release's namespace is applied, one in another namespace refuses the
// install, named, before anything is applied there.
func TestHelm4_HooksPassTheScopeCheck(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, gadgetGVK, ns, "hooked", map[string]any{"hook": true, "message": "mine"})
	waitRevisions(t, ns, "gadget-hooked", "1:deployed")
	if got := configMapData(t, ns, "gadget-hooked-hook")["message"]; got != "mine" {
		t.Errorf("the hook's ConfigMap says %q, want mine", got)
	}

	create(t, gadgetGVK, ns, "reaching", map[string]any{"hook": true, "hookNamespace": "kube-system"})
	conditionSays(t, gadgetGVK, ns, "reaching", status.ConditionReleased, metav1.ConditionFalse, "",
		"ConfigMap/gadget-reaching-hook", `namespace "kube-system"`)
	err := k8s.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "gadget-reaching-hook"}, &corev1.ConfigMap{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the hook outside the namespace: %v, want NotFound", err)
	}
}

// A chart with a field its kind does not have is refused by the API
// server's strict field validation, which Helm 4 asks for: the field is
// named in Released, and the tries stop at the remediation's maximum rather
// than looping.
func TestHelm4_AnUnknownFieldIsNamedAndNotRetriedForever(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, gadgetGVK, ns, "strict", map[string]any{"unknownField": "bogus"})
	conditionSays(t, gadgetGVK, ns, "strict", status.ConditionReleased, metav1.ConditionFalse, status.ReasonRetriesExhausted,
		".bogus: field not declared in schema")
	revisions := func() []string {
		revs, err := revisions(ns, "gadget-strict")
		if err != nil {
			t.Fatal(err)
		}
		return revs
	}
	tried := revisions()
	if len(tried) == 0 || len(tried) > 3 {
		t.Fatalf("revisions %v: want one failed revision per try, at most the 3 tries", tried)
	}
	stays(t, gadgetGVK, ns, "strict", 3*time.Second, tried...)
}

// A rollback to an older revision applies that revision, an object it has
// included when the revision rolled back from does not list it but the
// cluster still holds it (helm#32244: "original object ... not found").
func TestHelm4_RollbackToAnOlderRevision(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, gadgetGVK, ns, "back", map[string]any{"message": "one", "also": "back-kept", "keepAlso": true})
	waitRevisions(t, ns, "gadget-back", "1:deployed")
	patchSpec(t, gadgetGVK, ns, "back", `{"message":"two","also":null,"keepAlso":null}`)
	waitRevisions(t, ns, "gadget-back", "1:superseded", "2:deployed")
	if got := configMapData(t, ns, "back-kept")["message"]; got != "one" {
		t.Fatalf("the kept ConfigMap says %q after revision 2 dropped it, want it kept as revision 1 left it", got)
	}

	// A merge patch: the reconciler may still be writing the status.
	ann := []byte(`{"metadata":{"annotations":{"rudder.dev/rollback-to":"1"}}}`)
	if err := k8s.Patch(ctx, get(t, gadgetGVK, ns, "back"), client.RawPatch("application/merge-patch+json", ann)); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "gadget-back", "1:superseded", "2:superseded", "3:deployed")
	configMapSays(t, ns, "gadget-back", "one")
	if got := configMapData(t, ns, "back-kept")["message"]; got != "one" {
		t.Errorf("the kept ConfigMap says %q after the rollback, want revision 1's", got)
	}
	conditionSays(t, gadgetGVK, ns, "back", status.ConditionReleased, metav1.ConditionTrue, "RolledBack", "Rolled back to revision 1")
}

// Helm's lookup reads as the account rudder acts as for the resource: a
// Secret the account may not read fails the render, naming the account,
// and once it may, the chart sees it.
func TestHelm4_LookupActsAsTheResourcesAccount(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	allowAccounts(t, ns, "deployer")
	planted := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "planted"}, StringData: map[string]string{"k": "v"}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"}}
	for _, obj := range []client.Object{planted, sa} {
		if err := k8s.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	role := grantDeployer(t, ns, configMapsRule)
	cr := testenv.NewObject(gadgetGVK, ns, "looker", map[string]any{"lookupSecret": "planted"})
	cr.SetAnnotations(map[string]string{"rudder.dev/service-account": "deployer"})
	if err := k8s.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	user := "system:serviceaccount:" + ns + ":deployer"
	conditionSays(t, gadgetGVK, ns, "looker", status.ConditionReleased, metav1.ConditionFalse, "", user, "secrets")

	role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}})
	if err := k8s.Update(ctx, role); err != nil {
		t.Fatal(err)
	}
	reconcileSoon(t, ns, "looker")
	conditionSays(t, gadgetGVK, ns, "looker", status.ConditionReleased, metav1.ConditionTrue, "")
	if got := configMapData(t, ns, "gadget-looker-lookup")["found"]; got != "yes" {
		t.Errorf("the lookup as the account that may read the Secret found %q, want yes", got)
	}
}

// reconcileSoon asks for a reconcile of Gadget ns/name, as a user would
// after changing what the resource's account may do.
func reconcileSoon(t *testing.T, ns, name string) {
	t.Helper()
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, status.AnnotationReconcileRequestedAt, time.Now().UTC().Format(time.RFC3339Nano))
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gadgetGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	if err := k8s.Patch(ctx, u, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
}
