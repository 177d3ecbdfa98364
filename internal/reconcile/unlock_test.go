package reconcile_test

import (
	"fmt"
	"maps"
	"testing"

	ri "helm.sh/helm/v4/pkg/release"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	helmstorage "helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/signature"
	"github.com/rudder-operator/rudder/internal/stored"
	"github.com/rudder-operator/rudder/test/testenv"
)

// helmStore is Helm's own Secret storage of namespace ns, as the helm CLI
// reads and writes it.
func helmStore(t *testing.T, ns string) v1Store {
	t.Helper()
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	return v1Store{helmstorage.Init(driver.NewSecrets(cs.CoreV1().Secrets(ns)))}
}

// v1Store is Helm's storage, read as the one release type Helm 4 stores.
type v1Store struct{ *helmstorage.Storage }

func (s v1Store) Get(name string, version int) (*release.Release, error) {
	r, err := s.Storage.Get(name, version)
	if err != nil {
		return nil, err
	}
	return r.(*release.Release), nil
}

func (s v1Store) History(name string) ([]*release.Release, error) {
	rs, err := s.Storage.History(name)
	out := make([]*release.Release, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.(*release.Release))
	}
	return out, err
}

// rudderStore is the Secret storage of namespace ns as a rudder process
// writes it for the custom resource of UID resource: what it stores is
// signed with the manager's key. It stands in for a rudder process killed
// mid-operation, whose revisions are evidence.
func rudderStore(t *testing.T, ns string, resource types.UID) v1Store {
	t.Helper()
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	key, err := cs.CoreV1().Secrets("default").Get(ctx, "rudder-revision-key", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return v1Store{helmstorage.Init(signing{Driver: driver.NewSecrets(cs.CoreV1().Secrets(ns)), key: signature.NewKey(key.Data["key"]), resource: resource})}
}

// signing is a storage driver that signs what it writes, as rudder does.
type signing struct {
	driver.Driver
	key      *signature.Key
	resource types.UID
}

func (s signing) Create(key string, r ri.Releaser) error {
	rls := r.(*release.Release)
	helm.Sign(s.key, s.resource, rls)
	return s.Driver.Create(key, rls)
}

func (s signing) Update(key string, r ri.Releaser) error {
	rls := r.(*release.Release)
	helm.Sign(s.key, s.resource, rls)
	return s.Driver.Update(key, rls)
}

// forgePending stores a revision 2 of release name, pending-upgrade, with
// labels, as a writer that stopped mid-upgrade leaves it: rudder, signed for
// the resource (store rudderStore), or another (store helmStore).
func forgePending(t *testing.T, store v1Store, name string, labels map[string]string) v1Store {
	t.Helper()
	rel, err := store.Get(name, 1)
	if err != nil {
		t.Fatal(err)
	}
	rel.Version = 2
	rel.Info.Status = rcommon.StatusPendingUpgrade
	rel.Info.Description = "Preparing upgrade"
	rel.Labels = map[string]string{stored.LabelValuesDigest: "forged", stored.LabelChartDigest: "forged"}
	maps.Copy(rel.Labels, labels)
	if err := store.Create(rel); err != nil {
		t.Fatal(err)
	}
	return store
}

func TestReconciler_UnlocksRevisionLeftPendingByAGoneRudder(t *testing.T) {
	ns := namespace(t)
	if err := k8s.Create(ctx, testenv.NewObject(webappGVK, ns, "crash", webappSpec(1, "nginx:1.25"))); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "webapp-crash", "1:deployed")
	// As rudder writes an upgrade: its holder, the revision's own number, signed.
	forgePending(t, rudderStore(t, ns, get(t, webappGVK, ns, "crash").GetUID()), "webapp-crash",
		map[string]string{stored.LabelHolder: "rudder-gone.0badc0de", stored.LabelRevision: "2"})

	patch := []byte(`{"spec":{"replicas":2}}`)
	if err := k8s.Patch(ctx, get(t, webappGVK, ns, "crash"), client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "webapp-crash", "1:superseded", "2:failed", "3:deployed")
	testenv.Eventually(t, "status on revision 3", func() error {
		cr := get(t, webappGVK, ns, "crash")
		if err := statusIs(cr, map[string]any{"release.revision": 3, "observedGeneration": 2}); err != nil {
			return err
		}
		return conditionIs(cr, "Released", metav1.ConditionTrue, status.ReasonUpgradeSucceeded)
	})
}

// TestReconciler_APendingRevisionItDidNotSignIsNoLock: a revision pending
// that rudder did not sign (the helm CLI's upgrade in flight, or a Secret
// forged to look like one, rudder's labels copied or not) holds nothing back:
// the spec's upgrade goes on as if it were not stored, numbered past it.
func TestReconciler_APendingRevisionItDidNotSignIsNoLock(t *testing.T) {
	for _, tt := range []struct {
		name   string
		labels map[string]string
	}{
		{name: "cli", labels: nil},
		{name: "cli-copied", labels: map[string]string{stored.LabelHolder: "rudder-gone.0badc0de", stored.LabelRevision: "2"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ns := namespace(t)
			relName := "webapp-" + tt.name
			if err := k8s.Create(ctx, testenv.NewObject(webappGVK, ns, tt.name, webappSpec(1, "nginx:1.25"))); err != nil {
				t.Fatal(err)
			}
			waitRevisions(t, ns, relName, "1:deployed")
			forgePending(t, helmStore(t, ns), relName, tt.labels)
			patch := []byte(`{"spec":{"replicas":2}}`)
			if err := k8s.Patch(ctx, get(t, webappGVK, ns, tt.name), client.RawPatch("application/merge-patch+json", patch)); err != nil {
				t.Fatal(err)
			}
			waitRevisions(t, ns, relName, "1:superseded", "2:pending-upgrade", "3:deployed")
			conditionSays(t, webappGVK, ns, tt.name, "Released", metav1.ConditionTrue, status.ReasonUpgradeSucceeded, "Revision 3")
		})
	}
}

// installCut installs WebApp cut in ns and returns its Deployment.
func installCut(t *testing.T, ns string) appsv1.Deployment {
	t.Helper()
	if err := k8s.Create(ctx, testenv.NewObject(webappGVK, ns, "cut", webappSpec(1, "nginx:1.25"))); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "webapp-cut", "1:deployed")
	var dep appsv1.Deployment
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cut"}, &dep); err != nil {
		t.Fatal(err)
	}
	return dep
}

// TestReconciler_UpgradesAfterACanceledUpgrade: an upgrade canceled
// half-way (SIGTERM) can leave revision 1 superseded and revision 2 failed,
// none deployed. The release served before: rudder upgrades it in place,
// never uninstalls it to install it again.
func TestReconciler_UpgradesAfterACanceledUpgrade(t *testing.T) {
	ns := namespace(t)
	before := installCut(t, ns)

	// What the canceled upgrade left: 1 superseded, 2 failed.
	store := forgePending(t, rudderStore(t, ns, get(t, webappGVK, ns, "cut").GetUID()), "webapp-cut", nil)
	for n, status := range map[int]rcommon.Status{1: rcommon.StatusSuperseded, 2: rcommon.StatusFailed} {
		rel, err := store.Get("webapp-cut", n)
		if err != nil {
			t.Fatal(err)
		}
		rel.SetStatus(status, "left by a canceled upgrade")
		if err := store.Update(rel); err != nil {
			t.Fatal(err)
		}
	}
	// No revision serves the spec: rudder upgrades to it at once.
	waitRevisions(t, ns, "webapp-cut", "1:superseded", "2:superseded", "3:deployed")
	var after appsv1.Deployment
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cut"}, &after); err != nil {
		t.Fatal(err)
	}
	if after.UID != before.UID {
		t.Error("the Deployment was deleted and created again: the release was reinstalled, not upgraded")
	}
}

// TestReconciler_FinishesAReinstallCutShort: a rudder killed while its
// reinstall (a failed install, uninstalled to install it again) was in Helm's
// uninstall leaves the newest revision uninstalling, with its holder and
// uninstall mark. The next rudder unlocks it and reinstalls; it never waits
// for it as another writer's.
func TestReconciler_FinishesAReinstallCutShort(t *testing.T) {
	ns := namespace(t)
	before := installCut(t, ns)
	// What the cut reinstall left of the failed install: revision 1 as Helm's
	// uninstall marks it, with the labels rudder merges into that write.
	store := rudderStore(t, ns, get(t, webappGVK, ns, "cut").GetUID())
	rel, err := store.Get("webapp-cut", 1)
	if err != nil {
		t.Fatal(err)
	}
	rel.SetStatus(rcommon.StatusUninstalling, "Deletion in progress (or silently failed)")
	rel.Labels[stored.LabelHolder] = "rudder-gone.0badc0de"
	rel.Labels[stored.LabelUninstallOf] = "1"
	if err := store.Update(rel); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the release installed again", func() error {
		if err := conditionIs(get(t, webappGVK, ns, "cut"), "Released", metav1.ConditionTrue, status.ReasonInstallSucceeded); err != nil {
			return err
		}
		var after appsv1.Deployment
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cut"}, &after); err != nil {
			return err
		}
		if after.UID == before.UID {
			return fmt.Errorf("the Deployment is the one installed first: no reinstall yet")
		}
		return nil
	})
	waitRevisions(t, ns, "webapp-cut", "1:deployed")
	rel, err = store.Get("webapp-cut", 1)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := rel.Labels[stored.LabelUninstallOf]; ok {
		t.Errorf("the reinstalled revision 1 carries the uninstall mark %q", v)
	}
}

// TestUnlock_RemovesTheUninstallMark: an unlocked revision no longer says it
// is being uninstalled by rudder, so a later `helm uninstall` of it is never
// taken for rudder's.
func TestUnlock_RemovesTheUninstallMark(t *testing.T) {
	ns := namespace(t)
	if err := k8s.Create(ctx, testenv.NewObject(webappGVK, ns, "src", webappSpec(1, "nginx:1.25"))); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "webapp-src", "1:deployed")
	// A release no resource owns, so that only this test writes it.
	store := helmStore(t, ns)
	rel, err := store.Get("webapp-src", 1)
	if err != nil {
		t.Fatal(err)
	}
	rel.Name = "orphan"
	rel.SetStatus(rcommon.StatusUninstalling, "Deletion in progress (or silently failed)")
	rel.Labels = map[string]string{stored.LabelHolder: "rudder-gone.0badc0de", stored.LabelUninstallOf: "1", "kept": "yes"}
	if err := store.Create(rel); err != nil {
		t.Fatal(err)
	}
	unlocked, err := helmClientOf(t, restCfg, ns).Unlock("orphan", 1, "unlocked by the test", stored.LabelUninstallOf)
	if err != nil || !unlocked {
		t.Fatalf("Unlock: %v, %v", unlocked, err)
	}
	got, err := store.Get("orphan", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got.Info.Status != rcommon.StatusFailed || got.Info.Description != "unlocked by the test" {
		t.Errorf("revision 1 is %s (%q), want failed with the unlock's description", got.Info.Status, got.Info.Description)
	}
	want := map[string]string{stored.LabelHolder: "rudder-gone.0badc0de", "kept": "yes"}
	if !maps.Equal(got.Labels, want) {
		t.Errorf("labels %v, want %v", got.Labels, want)
	}
}
