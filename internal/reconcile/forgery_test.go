package reconcile_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/signature"
	"github.com/rudder-operator/rudder/internal/stored"
	"github.com/rudder-operator/rudder/test/testenv"
)

// forgery is a storage Secret whoever may create Secrets in a namespace can
// store for a release there: every field of it is theirs to choose.
type forgery struct {
	name    string
	status  string
	ahead   int  // its number, past the newest revision rudder wrote
	rudders bool // rudder's labels written on it, as if rudder wrote it
	copied  bool // the labels of rudder's newest revision copied onto it, signature and all
	hooks   bool // hooks that plant a ConfigMap when Helm runs them
	chart   string
	config  map[string]any
}

// forgeries forge each field of a revision in turn. Each one's manifest
// claims the platform's ConfigMaps, which the tenant may not change.
var forgeries = []forgery{
	{name: "deployed, claiming the platform's objects", status: "deployed", ahead: 1},
	{name: "pending-upgrade: a lock", status: "pending-upgrade", ahead: 1, rudders: true},
	{name: "pending-install far ahead: a lock and a number", status: "pending-install", ahead: 9, rudders: true},
	{name: "uninstalling with rudder's uninstall mark", status: "uninstalling", ahead: 1, rudders: true},
	{name: "superseded: a rollback target", status: "superseded", ahead: 1, rudders: true},
	{name: "failed, with the failed digests of a remediation", status: "failed", ahead: 1, rudders: true},
	{name: "signature of rudder's revision copied", status: "deployed", ahead: 1, copied: true},
	{name: "hooks that plant objects", status: "deployed", ahead: 1, rudders: true, hooks: true},
	{name: "another chart and values", status: "deployed", ahead: 1, rudders: true, chart: "platform", config: map[string]any{"message": "forged"}},
}

// The platform's ConfigMaps in the tenant's namespace: "platform" is a name
// the tenant's chart can render (value also), "platform-extra" one it never
// renders, which an upgrade from a revision listing it would delete.
var platformObjects = []string{"platform", "platform-extra"}

// TestReconciler_ForgedRevisionsDecideNothing forges every field of a stored
// revision against every action: nothing outside the resource's own objects
// changes, and the resource's own spec goes on as if the forgery were not
// stored.
func TestReconciler_ForgedRevisionsDecideNothing(t *testing.T) {
	t.Parallel()
	actions := []struct {
		name string
		run  func(t *testing.T, ns string, f forgery)
	}{
		{name: "install", run: forgedInstall},
		{name: "upgrade", run: forgedUpgrade},
		{name: "rollback", run: forgedRollback},
		{name: "uninstall", run: forgedUninstall},
		{name: "drift repair", run: forgedDrift},
	}
	for _, f := range forgeries {
		for _, a := range actions {
			t.Run(f.name+"/"+a.name, func(t *testing.T) {
				t.Parallel()
				ns := namespace(t)
				before := platform(t, ns)
				a.run(t, ns, f)
				platformUnchanged(t, ns, before)
			})
		}
	}
}

// forgedInstall: the forgery is stored before the resource exists, and the
// resource's chart renders the platform's ConfigMap: refused, as it is
// without a forgery.
func forgedInstall(t *testing.T, ns string, f forgery) {
	forge(t, ns, "gadget-app", 1+f.ahead-1, f, nil)
	create(t, gadgetGVK, ns, "app", map[string]any{"message": "mine", "also": "platform"})
	conditionSays(t, gadgetGVK, ns, "app", status.ConditionReleased, metav1.ConditionFalse, "", "platform")
	patchSpec(t, gadgetGVK, ns, "app", `{"also":null}`)
	conditionSays(t, gadgetGVK, ns, "app", status.ConditionReleased, metav1.ConditionTrue, "")
	configMapSays(t, ns, "gadget-app", "mine")
}

// forgedUpgrade: after an install, a spec change lands over the forgery,
// from rudder's own revision: nothing the forgery lists is deleted.
func forgedUpgrade(t *testing.T, ns string, f forgery) {
	installed(t, ns)
	forge(t, ns, "gadget-app", 1+f.ahead, f, rudderLabels(t, ns))
	patchSpec(t, gadgetGVK, ns, "app", `{"message":"two"}`)
	configMapSays(t, ns, "gadget-app", "two")
	conditionSays(t, gadgetGVK, ns, "app", status.ConditionReleased, metav1.ConditionTrue, "")
}

// forgedRollback: a rollback to the forgery is refused.
func forgedRollback(t *testing.T, ns string, f forgery) {
	installed(t, ns)
	n := 1 + f.ahead
	forge(t, ns, "gadget-app", n, f, rudderLabels(t, ns))
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"%d"}}}`, status.AnnotationRollbackTo, n)
	if err := k8s.Patch(ctx, testenv.NewObject(gadgetGVK, ns, "app", nil), client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	conditionSays(t, gadgetGVK, ns, "app", status.ConditionReleased, metav1.ConditionFalse, status.ReasonRevisionNotSigned, fmt.Sprintf("revision %d", n))
	configMapSays(t, ns, "gadget-app", "one")
}

// forgedUninstall: deleting the resource uninstalls what rudder made, and
// only that; the forgery's Secret goes with the release's history.
func forgedUninstall(t *testing.T, ns string, f forgery) {
	installed(t, ns)
	forge(t, ns, "gadget-app", 1+f.ahead, f, rudderLabels(t, ns))
	if err := k8s.Delete(ctx, testenv.NewObject(gadgetGVK, ns, "app", nil)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the Gadget and its release gone", func() error {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app"}, testenv.NewObject(gadgetGVK, ns, "app", nil))
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the Gadget: %w", err)
		}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gadget-app"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("its ConfigMap: %w", err)
		}
		if revs, err := revisions(ns, "gadget-app"); err != nil || len(revs) > 0 {
			return fmt.Errorf("storage: %v %w", revs, err)
		}
		return nil
	})
}

// forgedDrift: an object of the release deleted by hand is put back from
// rudder's revision, not from the forgery.
func forgedDrift(t *testing.T, ns string, f forgery) {
	installed(t, ns)
	forge(t, ns, "gadget-app", 1+f.ahead, f, rudderLabels(t, ns))
	reconciled(t, gadgetGVK, ns, "app")
	if err := k8s.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gadget-app"}}); err != nil {
		t.Fatal(err)
	}
	configMapSays(t, ns, "gadget-app", "one")
}

// installed creates the Gadget "app" and waits for its first revision.
func installed(t *testing.T, ns string) {
	t.Helper()
	create(t, gadgetGVK, ns, "app", map[string]any{"message": "one"})
	conditionSays(t, gadgetGVK, ns, "app", status.ConditionReleased, metav1.ConditionTrue, "")
}

// rudderLabels returns the labels of the newest storage Secret rudder wrote
// for gadget-app: more than a tenant, who may read no Secret, could know.
func rudderLabels(t *testing.T, ns string) map[string]string {
	t.Helper()
	var s corev1.Secret
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sh.helm.release.v1.gadget-app.v1"}, &s); err != nil {
		t.Fatal(err)
	}
	return s.Labels
}

// platform creates the platform's ConfigMaps and returns their
// resourceVersions.
func platform(t *testing.T, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range platformObjects {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"owner": "platform"}}
		if err := k8s.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		out[name] = cm.ResourceVersion
	}
	return out
}

// platformUnchanged checks that the platform's ConfigMaps are as created,
// and that nothing a forged hook plants exists.
func platformUnchanged(t *testing.T, ns string, before map[string]string) {
	t.Helper()
	for name, rv := range before {
		var cm corev1.ConfigMap
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cm); err != nil {
			t.Errorf("the platform's ConfigMap %s: %v", name, err)
			continue
		}
		if cm.ResourceVersion != rv || cm.Data["owner"] != "platform" || len(cm.OwnerReferences) > 0 {
			t.Errorf("the platform's ConfigMap %s changed: resourceVersion %s (was %s), data %v, owners %v", name, cm.ResourceVersion, rv, cm.Data, cm.OwnerReferences)
		}
	}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "planted"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("a forged hook ran: ConfigMap planted: %v", err)
	}
}

// forge stores f as revision n of release, with labels (rudder's, read from
// its newest revision) when f writes them.
func forge(t *testing.T, ns, release string, n int, f forgery, labels map[string]string) {
	t.Helper()
	manifest := ""
	for _, name := range platformObjects {
		manifest += fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  owner: tenant\n", name, ns)
	}
	chart := "gadget"
	if f.chart != "" {
		chart = f.chart
	}
	rel := map[string]any{
		"name": release, "namespace": ns, "version": n, "manifest": manifest, "config": f.config,
		"info":  map[string]any{"status": f.status, "description": "forged"},
		"chart": map[string]any{"metadata": map[string]any{"name": chart, "version": "0.1.0", "apiVersion": "v2"}},
	}
	if f.hooks {
		hook := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: planted\ndata:\n  by: hook\n"
		var hooks []map[string]any
		for _, event := range []string{"pre-install", "pre-upgrade", "pre-rollback", "pre-delete", "post-delete"} {
			hooks = append(hooks, map[string]any{"name": "planted", "kind": "ConfigMap", "path": "gadget/templates/" + event + ".yaml",
				"manifest": hook, "events": []string{event}})
		}
		rel["hooks"] = hooks
	}
	own := map[string]string{"owner": "helm", "name": release, "status": f.status, "version": strconv.Itoa(n)}
	switch {
	case f.copied:
		maps.Copy(own, labels)
	case f.rudders:
		for k, v := range labels {
			if strings.HasPrefix(k, "rudder.dev/") {
				own[k] = v
			}
		}
		own[stored.LabelRevision] = strconv.Itoa(n)
		own[stored.LabelUninstallOf] = strconv.Itoa(n)
		own[stored.LabelFailedValuesDigest], own[stored.LabelFailedChartDigest] = labels[stored.LabelValuesDigest], labels[stored.LabelChartDigest]
	}
	own["owner"], own["name"], own["status"], own["version"] = "helm", release, f.status, strconv.Itoa(n)
	storeRevision(t, ns, own, rel)
}

// Revisions a rudder wrote before revisions named their resource carry its
// signature of their manifest alone (signature.Legacy): a tenant could no
// more forge it then than now, so they are still evidence. A release such a
// rudder made carries on: no new revision while nothing changes, an upgrade
// from it when the spec changes, a rollback to it, and its uninstall.
func TestReconciler_RevisionsAnEarlierRudderSignedCarryOn(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	create(t, gadgetGVK, ns, "old", map[string]any{"message": "one"})
	waitRevisions(t, ns, "gadget-old", "1:deployed")
	conditionSays(t, gadgetGVK, ns, "old", status.ConditionReleased, metav1.ConditionTrue, status.ReasonInstallSucceeded)
	legacySign(t, ns, "gadget-old", 1)

	reconciled(t, gadgetGVK, ns, "old")
	stays(t, gadgetGVK, ns, "old", time.Second, "1:deployed")
	conditionSays(t, gadgetGVK, ns, "old", status.ConditionReleased, metav1.ConditionTrue, status.ReasonInstallSucceeded)

	patchSpec(t, gadgetGVK, ns, "old", `{"message":"two"}`)
	waitRevisions(t, ns, "gadget-old", "1:superseded", "2:deployed")
	configMapSays(t, ns, "gadget-old", "two")

	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"1"}}}`, status.AnnotationRollbackTo)
	if err := k8s.Patch(ctx, testenv.NewObject(gadgetGVK, ns, "old", nil), client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "gadget-old", "1:superseded", "2:superseded", "3:deployed")
	configMapSays(t, ns, "gadget-old", "one")

	if err := k8s.Delete(ctx, testenv.NewObject(gadgetGVK, ns, "old", nil)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the Gadget and its release gone", func() error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gadget-old"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("its ConfigMap: %w", err)
		}
		if revs, err := revisions(ns, "gadget-old"); err != nil || len(revs) > 0 {
			return fmt.Errorf("storage: %v %w", revs, err)
		}
		return nil
	})
}

// legacySign rewrites revision n of release as a rudder that signed only
// manifests wrote it: rudder's signature labels of today replaced by that
// rudder's, an HMAC-SHA256 of the namespace, name, manifest and number with
// the manager's key.
func legacySign(t *testing.T, ns, release string, n int) {
	t.Helper()
	store := helmStore(t, ns)
	rel, err := store.Get(release, n)
	if err != nil {
		t.Fatal(err)
	}
	var keySecret corev1.Secret
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: "default", Name: "rudder-revision-key"}, &keySecret); err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, keySecret.Data["key"])
	for _, f := range []string{ns, release, rel.Manifest} {
		_ = binary.Write(mac, binary.BigEndian, uint64(len(f)))
		mac.Write([]byte(f))
	}
	_ = binary.Write(mac, binary.BigEndian, int64(n))
	delete(rel.Labels, signature.LabelResource)
	delete(rel.Labels, signature.LabelContent)
	rel.Labels[signature.Label] = hex.EncodeToString(mac.Sum(nil)[:16])
	if err := store.Update(rel); err != nil {
		t.Fatal(err)
	}
}
