package reconcile_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/identity"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/test/testenv"
)

// A chart whose values put an object in another namespace is refused before
// anything is applied: the resource's author reaches no further than its own
// namespace.
func TestReconciler_RefusesAnObjectOutsideItsNamespace(t *testing.T) {
	t.Parallel()
	ns, other := namespace(t), namespace(t)
	create(t, gadgetGVK, ns, "reach", map[string]any{"namespace": other})
	conditionSays(t, gadgetGVK, ns, "reach", status.ConditionReleased, metav1.ConditionFalse, status.ReasonOutsideNamespace,
		"ConfigMap/gadget-reach", other)
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: other, Name: "gadget-reach"}, cm); !apierrors.IsNotFound(err) {
		t.Fatalf("ConfigMap in the other namespace: %v, want none", err)
	}
}

// A revision rudder did not write, such as a storage Secret forged by whoever
// may create Secrets in the namespace, is never rolled back to: its manifest
// is not applied with rudder's rights.
func TestReconciler_NeverRollsBackToARevisionItDidNotWrite(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, gadgetGVK, ns, "forged", map[string]any{"message": "spec"})
	conditionSays(t, gadgetGVK, ns, "forged", status.ConditionReleased, metav1.ConditionTrue, "")
	forgeRevision(t, ns, "gadget-forged", 2, "superseded", `apiVersion: v1
kind: ConfigMap
metadata:
  name: planted
  namespace: `+ns+`
data: {from: forgery}
`)
	patch := []byte(`{"metadata":{"annotations":{"rudder.dev/rollback-to":"2"}}}`)
	cr := testenv.NewObject(gadgetGVK, ns, "forged", nil)
	if err := k8s.Patch(ctx, cr, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	conditionSays(t, gadgetGVK, ns, "forged", status.ConditionReleased, metav1.ConditionFalse, status.ReasonRevisionNotSigned, "revision 2")
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "planted"}, cm); !apierrors.IsNotFound(err) {
		t.Fatalf("the forged revision's ConfigMap: %v, want none", err)
	}
}

// forgeRevision stores a Helm storage Secret that rudder did not write:
// revision `version` of release, with status and manifest.
func forgeRevision(t *testing.T, ns, release string, version int, status, manifest string) {
	t.Helper()
	storeRevision(t, ns, map[string]string{"owner": "helm", "name": release, "status": status, "version": fmt.Sprint(version)},
		map[string]any{
			"name": release, "namespace": ns, "version": version, "manifest": manifest,
			"info":  map[string]any{"status": status, "description": "forged"},
			"chart": map[string]any{"metadata": map[string]any{"name": "gadget", "version": "0.1.0", "apiVersion": "v2"}},
		})
}

// storeRevision creates the Helm storage Secret of rel (a release as Helm
// encodes it: name, version, ...) with labels, as any client of Helm's
// Secrets driver could.
func storeRevision(t *testing.T, ns string, labels map[string]string, rel map[string]any) {
	t.Helper()
	body, err := json.Marshal(rel)
	if err != nil {
		t.Fatal(err)
	}
	var zipped bytes.Buffer
	w := gzip.NewWriter(&zipped)
	_, _ = w.Write(body)
	_ = w.Close()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("sh.helm.release.v1.%s.v%v", rel["name"], rel["version"]), Labels: labels},
		Type:       "helm.sh/release.v1",
		Data:       map[string][]byte{"release": []byte(base64.StdEncoding.EncodeToString(zipped.Bytes()))},
	}
	if err := k8s.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
}

// allowAccounts has ns's Namespace allow its resources to name accounts, as
// the platform does (identity.NamespaceAnnotation).
func allowAccounts(t *testing.T, ns, accounts string) {
	t.Helper()
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, identity.NamespaceAnnotation, accounts)
	if err := k8s.Patch(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// With rudder.dev/service-account, rudder acts as that ServiceAccount of the
// resource's namespace, one its Namespace allows: what the account may not do
// fails, named, and what it may do then succeeds, and status says whom rudder
// acted as.
func TestReconciler_ActsAsTheResourcesServiceAccount(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	allowAccounts(t, ns, "deployer")
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"}}
	if err := k8s.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	cr := testenv.NewObject(gadgetGVK, ns, "lean", map[string]any{"message": "spec"})
	cr.SetAnnotations(map[string]string{"rudder.dev/service-account": "deployer"})
	if err := k8s.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	user := "system:serviceaccount:" + ns + ":deployer"
	conditionSays(t, gadgetGVK, ns, "lean", status.ConditionReleased, metav1.ConditionFalse, status.ReasonForbidden,
		user, "configmaps")
	if got := get(t, gadgetGVK, ns, "lean"); !strings.Contains(fmt.Sprint(got.Object["status"]), "actingAs:"+user) {
		t.Errorf("status does not say rudder acts as %s: %v", user, got.Object["status"])
	}
	grantDeployer(t, ns, configMapsRule)
	conditionSays(t, gadgetGVK, ns, "lean", status.ConditionReleased, metav1.ConditionTrue, "")
}

// configMapsRule is what the Gadget chart needs: every verb on ConfigMaps.
var configMapsRule = rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"},
	Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}

// grantDeployer binds the ServiceAccount deployer of ns to a Role deployer of
// rules, and returns the Role.
func grantDeployer(t *testing.T, ns string, rules ...rbacv1.PolicyRule) *rbacv1.Role {
	t.Helper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"}, Rules: rules}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "deployer"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "deployer"}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := k8s.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	return role
}

// A storage Secret that does not decode is named in a condition, the spec
// still goes on, and the resource can still be deleted: its uninstall leaves
// that Secret, and says so.
func TestReconciler_AStorageSecretThatDoesNotDecodeIsNamedAndDeletionCompletes(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, gadgetGVK, ns, "garbled", map[string]any{"message": "spec"})
	conditionSays(t, gadgetGVK, ns, "garbled", status.ConditionReleased, metav1.ConditionTrue, "")
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: "sh.helm.release.v1.gadget-garbled.v2",
			Labels: map[string]string{"owner": "helm", "name": "gadget-garbled", "status": "deployed", "version": "2"},
		},
		Type: "helm.sh/release.v1",
		Data: map[string][]byte{"release": []byte("not a release")},
	}
	if err := k8s.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	// Whoever may create Secrets can store one: it is named, and decides nothing.
	conditionSays(t, gadgetGVK, ns, "garbled", status.ConditionOutOfBand, metav1.ConditionTrue, status.ReasonRevisionUndecodable,
		"sh.helm.release.v1.gadget-garbled.v2")
	conditionSays(t, gadgetGVK, ns, "garbled", status.ConditionReleased, metav1.ConditionTrue, "")
	patchSpec(t, gadgetGVK, ns, "garbled", `{"message":"changed"}`)
	configMapSays(t, ns, "gadget-garbled", "changed")
	if err := k8s.Delete(ctx, testenv.NewObject(gadgetGVK, ns, "garbled", nil)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the Gadget gone", func() error {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "garbled"}, testenv.NewObject(gadgetGVK, ns, "garbled", nil))
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %w", err)
	})
}

// The annotation may name only an account the resource's Namespace allows.
// Any other is refused in a condition, and rudder then acts as no one for the
// resource, itself included: nothing is installed, and its deletion waits,
// holding the finalizer, until the Namespace allows the account.
func TestReconciler_RefusesAnAccountItsNamespaceDoesNotAllow(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	allowAccounts(t, ns, "deployer")
	cr := testenv.NewObject(gadgetGVK, ns, "picky", map[string]any{"message": "spec"})
	cr.SetAnnotations(map[string]string{"rudder.dev/service-account": "admin"})
	if err := k8s.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	conditionSays(t, gadgetGVK, ns, "picky", status.ConditionReleased, metav1.ConditionFalse, status.ReasonServiceAccountNotAllowed,
		`namespace "`+ns+`" allows deployer`, identity.NamespaceAnnotation)
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gadget-picky"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the release's ConfigMap: %v, want none: rudder acted for a refused account", err)
	}
	// A malformed name is refused the same way, deletion included.
	patch := []byte(`{"metadata":{"annotations":{"rudder.dev/service-account":"team-b:admin"}}}`)
	if err := k8s.Patch(ctx, testenv.NewObject(gadgetGVK, ns, "picky", nil), client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	conditionSays(t, gadgetGVK, ns, "picky", status.ConditionReleased, metav1.ConditionFalse, status.ReasonServiceAccountInvalid, "team-b:admin")
	if err := k8s.Delete(ctx, testenv.NewObject(gadgetGVK, ns, "picky", nil)); err != nil {
		t.Fatal(err)
	}
	reconciled(t, gadgetGVK, ns, "picky")
	if got := get(t, gadgetGVK, ns, "picky"); got.GetDeletionTimestamp() == nil || len(got.GetFinalizers()) == 0 {
		t.Fatalf("the Gadget's deletion went ahead as rudder itself: %v", got.Object["metadata"])
	}
	// The platform allows the account: the deletion completes, as it.
	patch = []byte(`{"metadata":{"annotations":{"rudder.dev/service-account":"admin"}}}`)
	if err := k8s.Patch(ctx, testenv.NewObject(gadgetGVK, ns, "picky", nil), client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	allowAccounts(t, ns, "deployer, admin")
	testenv.Eventually(t, "the Gadget gone", func() error {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "picky"}, testenv.NewObject(gadgetGVK, ns, "picky", nil))
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %w", err)
	})
}

// A revision rudder signed whose storage Secret no longer decodes (its data
// overwritten) is named in Released on every path: the reconcile that finds
// it, and an upgrade asked for after. The release waits on it, since its
// labels are rudder's; deleting the resource still completes.
func TestReconciler_ASignedRevisionThatDoesNotDecodeIsNamedOnEveryPath(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, gadgetGVK, ns, "broken", map[string]any{"message": "spec"})
	waitRevisions(t, ns, "gadget-broken", "1:deployed")
	// A reconcile reads revision 1 back once: until then rudder answers it
	// from what it wrote (RememberWritten), whatever the Secret holds.
	reconciled(t, gadgetGVK, ns, "broken")
	var s corev1.Secret
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sh.helm.release.v1.gadget-broken.v1"}, &s); err != nil {
		t.Fatal(err)
	}
	s.Data["release"] = []byte("not a release")
	if err := k8s.Update(ctx, &s); err != nil {
		t.Fatal(err)
	}
	reconciled(t, gadgetGVK, ns, "broken")
	conditionSays(t, gadgetGVK, ns, "broken", status.ConditionReleased, metav1.ConditionFalse, status.ReasonRevisionUndecodable,
		"sh.helm.release.v1.gadget-broken.v1")
	patchSpec(t, gadgetGVK, ns, "broken", `{"message":"changed"}`)
	reconciled(t, gadgetGVK, ns, "broken")
	conditionSays(t, gadgetGVK, ns, "broken", status.ConditionReleased, metav1.ConditionFalse, status.ReasonRevisionUndecodable,
		"sh.helm.release.v1.gadget-broken.v1")
	if err := k8s.Delete(ctx, testenv.NewObject(gadgetGVK, ns, "broken", nil)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the Gadget gone", func() error {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "broken"}, testenv.NewObject(gadgetGVK, ns, "broken", nil))
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %w", err)
	})
}
