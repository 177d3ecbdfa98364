package helm

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	ri "helm.sh/helm/v4/pkg/release"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/rudder-operator/rudder/test/testenv"

	"github.com/rudder-operator/rudder/internal/signature"
)

// apiServer is the API server the storage tests of this package share,
// started by the first test that needs it and stopped by TestMain.
var apiServer struct {
	once sync.Once
	env  *envtest.Environment
	cfg  *rest.Config
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if apiServer.env != nil {
		_ = apiServer.env.Stop()
	}
	os.Exit(code)
}

// sharedAPIServer returns the config of the shared API server.
func sharedAPIServer(t *testing.T) *rest.Config {
	t.Helper()
	apiServer.once.Do(func() { apiServer.env, apiServer.cfg, apiServer.err = testenv.Start() })
	if apiServer.err != nil {
		t.Fatal(apiServer.err)
	}
	return apiServer.cfg
}

// storageNamespace is a new namespace of the shared API server and its
// Secrets.
type storageNamespace struct {
	name    string
	secrets corev1client.SecretInterface
}

func newStorageNamespace(t *testing.T) storageNamespace {
	t.Helper()
	cfg := sharedAPIServer(t)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := cs.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "storage-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return storageNamespace{name: ns.Name, secrets: cs.CoreV1().Secrets(ns.Name)}
}

// driver is Helm's Secrets driver of the namespace as rudder stores through
// it (conditionalSecrets).
func (s storageNamespace) driver() driver.Driver { return newSecretsDriver(s.secrets) }

// helmGet reads revision key through Helm's own driver, as the helm CLI does.
func helmGet(t *testing.T, helms *driver.Secrets, key string) *release.Release {
	t.Helper()
	r, err := helms.Get(key)
	if err != nil {
		t.Fatal(err)
	}
	return r.(*release.Release)
}

func storedRelease(version int, status rcommon.Status) *release.Release {
	return &release.Release{
		Name: "app", Namespace: "shop", Version: version,
		Info:     &release.Info{Status: status},
		Chart:    &chart.Chart{Metadata: &chart.Metadata{Name: "webapp", Version: "0.1.0"}},
		Config:   map[string]any{"n": float64(version)},
		Manifest: fmt.Sprintf("kind: ConfigMap\nmetadata:\n  name: v%d\n", version),
	}
}

// A storage write carries the resourceVersion the driver read the revision
// at, however it read it: a revision the helm CLI (Helm's own driver) wrote
// in between is not overwritten, and the write fails with the API server's
// Conflict. Against a real API server, which is what enforces it.
func TestSecretsDriver_Update(t *testing.T) {
	const key = "sh.helm.release.v1.webapp-front.v1"
	revision := func(status rcommon.Status, description string) *release.Release {
		return &release.Release{Name: "webapp-front", Version: 1,
			Info:  &release.Info{Status: status, Description: description},
			Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "webapp", Version: "0.1.0"}}}
	}
	installedByHelm := func(helms *driver.Secrets) error {
		return helms.Create(key, revision(rcommon.StatusDeployed, "Install complete"))
	}
	tests := []struct {
		name string
		// read stores revision 1 and has ours read it (or write it).
		read     func(ours driver.Driver, helms *driver.Secrets) error
		cliWrite bool // the helm CLI writes revision 1 after ours read it
	}{
		{name: "read by Get, unchanged", read: func(ours driver.Driver, helms *driver.Secrets) error {
			if err := installedByHelm(helms); err != nil {
				return err
			}
			_, err := get(ours, key)
			return err
		}},
		{name: "read by Get, then written by the helm CLI", cliWrite: true, read: func(ours driver.Driver, helms *driver.Secrets) error {
			if err := installedByHelm(helms); err != nil {
				return err
			}
			_, err := get(ours, key)
			return err
		}},
		{name: "read by Query, then written by the helm CLI", cliWrite: true, read: func(ours driver.Driver, helms *driver.Secrets) error {
			if err := installedByHelm(helms); err != nil {
				return err
			}
			_, err := ours.Query(map[string]string{"name": "webapp-front", "owner": "helm", "status": "deployed"})
			return err
		}},
		{name: "read by List, then written by the helm CLI", cliWrite: true, read: func(ours driver.Driver, helms *driver.Secrets) error {
			if err := installedByHelm(helms); err != nil {
				return err
			}
			_, err := ours.List(func(ri.Releaser) bool { return true })
			return err
		}},
		{name: "created by the driver, then written by the helm CLI", cliWrite: true, read: func(ours driver.Driver, _ *driver.Secrets) error {
			return ours.Create(key, revision(rcommon.StatusPendingInstall, "Initial install underway"))
		}},
		{name: "updated by the driver, unchanged", read: func(ours driver.Driver, _ *driver.Secrets) error {
			if err := ours.Create(key, revision(rcommon.StatusPendingInstall, "Initial install underway")); err != nil {
				return err
			}
			return ours.Update(key, revision(rcommon.StatusDeployed, "Install complete"))
		}},
		{name: "updated by the driver, then written by the helm CLI", cliWrite: true, read: func(ours driver.Driver, _ *driver.Secrets) error {
			if err := ours.Create(key, revision(rcommon.StatusPendingInstall, "Initial install underway")); err != nil {
				return err
			}
			return ours.Update(key, revision(rcommon.StatusDeployed, "Install complete"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := newStorageNamespace(t)
			ours, helms := ns.driver(), driver.NewSecrets(ns.secrets)
			if err := tt.read(ours, helms); err != nil {
				t.Fatal(err)
			}
			want := "Upgrade complete" // what rudder's write says
			if tt.cliWrite {
				want = "Rollback to 1"
				if err := helms.Update(key, revision(rcommon.StatusSuperseded, want)); err != nil {
					t.Fatal(err)
				}
			}
			err := ours.Update(key, revision(rcommon.StatusSuperseded, "Upgrade complete"))
			switch {
			case tt.cliWrite && !apierrors.IsConflict(err):
				t.Errorf("update after the helm CLI wrote: %v, want a Conflict", err)
			case !tt.cliWrite && err != nil:
				t.Errorf("update: %v", err)
			}
			if got := helmGet(t, helms, key); got.Info.Description != want {
				t.Errorf("stored revision says %q, want %q", got.Info.Description, want)
			}
		})
	}
}

// A storage Secret that does not hold a release is an error naming it
// (ErrUndecodable), at every step of decoding that can fail; the error
// carries nothing of the data. Helm's queries leave it out.
func TestSecretsDriver_Get(t *testing.T) {
	gzipped := func(b []byte) []byte {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		_, _ = w.Write(b)
		_ = w.Close()
		return buf.Bytes()
	}
	b64 := func(b []byte) []byte { return []byte(base64.StdEncoding.EncodeToString(b)) }
	tests := []struct {
		name string
		data []byte
	}{
		{name: "not base64", data: []byte("secret words, not a release")},
		{name: "not gzip after its magic", data: b64(append([]byte{0x1f, 0x8b, 0x08}, "secret words"...))},
		{name: "not JSON", data: b64(gzipped([]byte("secret words")))},
		{name: "JSON of something else", data: b64(gzipped([]byte(`{"name": 42}`)))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := newStorageNamespace(t)
			const key = "sh.helm.release.v1.app.v2"
			forged := &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: key, Labels: map[string]string{"owner": "helm", "name": "app", "version": "2", "status": "deployed"}},
				Type:       "helm.sh/release.v1",
				Data:       map[string][]byte{"release": tt.data},
			}
			if _, err := ns.secrets.Create(context.Background(), forged, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			d := ns.driver()
			if err := d.Create("sh.helm.release.v1.app.v1", storedRelease(1, rcommon.StatusSuperseded)); err != nil {
				t.Fatal(err)
			}
			_, err := get(d, key)
			if !errors.Is(err, ErrUndecodable) || !strings.Contains(err.Error(), key) {
				t.Errorf("Get: %v, want ErrUndecodable naming %s", err, key)
			}
			if strings.Contains(fmt.Sprint(err), "secret words") {
				t.Errorf("the error carries the Secret's data: %v", err)
			}
			rels, err := d.Query(map[string]string{"owner": "helm", "name": "app"})
			if err != nil || len(rels) != 1 || rels[0].(*release.Release).Version != 1 {
				t.Errorf("history: %d revisions, %v; want revision 1 alone", len(rels), err)
			}
		})
	}
}

// Deleting a revision already gone succeeds: a namespace being deleted takes
// the storage Secrets along while an uninstall purges them, and Helm joins
// a purge's error into a string no caller can tell from a real failure.
func TestTrusted_Delete(t *testing.T) {
	ns := newStorageNamespace(t)
	st := storage.Init(newTrusted(ns.driver(), nil, "", nil))
	for v := 1; v <= 2; v++ {
		if err := st.Create(storedRelease(v, rcommon.StatusSuperseded)); err != nil {
			t.Fatal(err)
		}
	}
	// The namespace controller got to revision 1 first.
	if err := ns.secrets.Delete(context.Background(), "sh.helm.release.v1.app.v1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for v := 1; v <= 2; v++ {
		if _, err := st.Delete("app", v); err != nil {
			t.Errorf("deleting revision %d: %v", v, err)
		}
	}
	if list, _ := ns.secrets.List(context.Background(), metav1.ListOptions{}); len(list.Items) != 0 {
		t.Errorf("%d storage Secrets left, want none", len(list.Items))
	}
	if _, err := st.Delete("app", 3); err != nil {
		t.Errorf("deleting a revision that never was: %v", err)
	}

	// Gone between Helm's read of it and its delete.
	raced := storage.Init(newTrusted(newSecretsDriver(deletedFirst{ns.secrets}), nil, "", nil))
	if err := raced.Create(storedRelease(4, rcommon.StatusSuperseded)); err != nil {
		t.Fatal(err)
	}
	if _, err := raced.Delete("app", 4); err != nil {
		t.Errorf("deleting a revision another deleted after Helm read it: %v", err)
	}
}

// deletedFirst is a Secret client whose Delete finds the Secret deleted by
// someone else a moment before: it deletes it, then answers NotFound.
type deletedFirst struct {
	corev1client.SecretInterface
}

func (d deletedFirst) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	if err := d.SecretInterface.Delete(ctx, name, opts); err != nil {
		return err
	}
	return d.SecretInterface.Delete(ctx, name, opts)
}

// newGetter returns a Getter on the shared API server that signs with a
// test key.
func newGetter(t *testing.T) *Getter {
	t.Helper()
	cfg := sharedAPIServer(t)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGetter(cfg, mapper, logr.Discard(), WithSigningKey(signature.NewKey([]byte("0123456789abcdef0123456789abcdef"))))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// The revisions a Getter with a key writes carry a signature for the
// resource, which the Getter verifies, and which Helm's own driver (the helm
// CLI) reads back with the rest; a revision the helm CLI then writes anew is
// not signed, and neither is one read for another resource.
func TestGetter_SignsWhatItStores(t *testing.T) {
	ns := newStorageNamespace(t)
	g := newGetter(t)
	const uid = "0b4c7a57-a1a2-4c5e-9f7d-1e2d3c4b5a69"
	c, err := g.For(Access{Scope: Scope{Namespace: ns.name}, Resource: uid})
	if err != nil {
		t.Fatal(err)
	}
	chrt, err := LoadChart(os.DirFS("../../charts"), "webapp")
	if err != nil {
		t.Fatal(err)
	}
	rel, err := c.Install(context.Background(), Spec{Name: "webapp-front", Chart: chrt, Values: webappValues(), Labels: map[string]string{"team": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if !rel.Signed {
		t.Errorf("the installed revision is not signed: labels %v", rel.Labels)
	}
	helms := driver.NewSecrets(ns.secrets)
	stored := helmGet(t, helms, "sh.helm.release.v1.webapp-front.v1")
	if stored.Labels[signature.Label] == "" || stored.Labels[signature.LabelResource] != uid || stored.Labels["team"] != "a" || stored.Manifest != rel.Manifest {
		t.Errorf("Helm read labels %v and a manifest of %d bytes, want the signature, team=a and %d bytes",
			stored.Labels, len(stored.Manifest), len(rel.Manifest))
	}
	read, err := g.Revision(ns.name, "webapp-front", 1, uid)
	if err != nil || !read.Signed {
		t.Errorf("Revision: signed %v, %v; want signed", read != nil && read.Signed, err)
	}
	if read, err := g.Revision(ns.name, "webapp-front", 1, "another-uid"); err != nil || read.Signed {
		t.Errorf("Revision read for another resource of the name: signed %v, %v; want not signed", read != nil && read.Signed, err)
	}
	// The helm CLI writes revision 1 with another manifest, keeping its labels.
	stored.Manifest += "---\n# by hand\n"
	if err := helms.Update("sh.helm.release.v1.webapp-front.v1", stored); err != nil {
		t.Fatal(err)
	}
	if read, err := g.Revision(ns.name, "webapp-front", 1, uid); err != nil || read.Signed {
		t.Errorf("Revision after the helm CLI changed its manifest: signed %v, %v; want not signed", read != nil && read.Signed, err)
	}
}

// A dry run over a release whose newest revision is pending (an upgrade
// under way) says so with ErrOperationInProgress, which callers tell from
// a chart that does not render; once the revision is deployed it renders.
func TestClient_DryRunWhileAnOperationIsInProgress(t *testing.T) {
	ns := newStorageNamespace(t)
	g := newGetter(t)
	chrt, err := LoadChart(os.DirFS("../../charts"), "webapp")
	if err != nil {
		t.Fatal(err)
	}
	c, err := g.For(Access{Scope: Scope{Namespace: ns.name}})
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Name: "webapp-busy", Chart: chrt, Values: webappValues()}
	if _, err := c.Install(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	helms := driver.NewSecrets(ns.secrets)
	const key = "sh.helm.release.v1.webapp-busy.v1"
	setStatus := func(s rcommon.Status) {
		t.Helper()
		rel := helmGet(t, helms, key)
		rel.Info.Status = s
		if err := helms.Update(key, rel); err != nil {
			t.Fatal(err)
		}
	}
	setStatus(rcommon.StatusPendingUpgrade)
	if _, err := c.DryRun(context.Background(), spec); !errors.Is(err, ErrOperationInProgress) {
		t.Errorf("DryRun over a pending revision: %v; want ErrOperationInProgress", err)
	}
	setStatus(rcommon.StatusDeployed)
	if c, err = g.For(Access{Scope: Scope{Namespace: ns.name}}); err != nil {
		t.Fatal(err)
	}
	rel, err := c.DryRun(context.Background(), spec)
	if err != nil || rel.Revision != 2 {
		t.Errorf("DryRun over a deployed revision: revision %v, %v; want revision 2", rel, err)
	}
}

// webappValues are the values a WebApp must give its chart.
func webappValues() map[string]any {
	return map[string]any{"image": "nginx:1.25", "port": 80}
}

// An install and an upgrade return what the API server answered to each
// apply (Release.Applied): every object of the manifest, at the version the
// API server then held, so that no drift comparison need follow.
func TestClient_InstallAndUpgradeReturnWhatTheyApplied(t *testing.T) {
	ns := newStorageNamespace(t)
	g := newGetter(t)
	c, err := g.For(Access{Scope: Scope{Namespace: ns.name}, Resource: "5e1d9a0c-7b1f-4d2e-8a3c-6f5e4d3c2b1a"})
	if err != nil {
		t.Fatal(err)
	}
	chrt, err := LoadChart(os.DirFS("../../charts"), "webapp")
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Name: "webapp-applied", Chart: chrt, Values: webappValues()}
	check := func(what string, rel *Release) {
		t.Helper()
		objs, err := rel.Objects()
		if err != nil {
			t.Fatal(err)
		}
		if len(rel.Applied) != len(objs) {
			t.Fatalf("%s: %d objects applied, want the manifest's %d", what, len(rel.Applied), len(objs))
		}
		dyn := dynamic.NewForConfigOrDie(sharedAPIServer(t))
		for _, a := range rel.Applied {
			gv, _ := schema.ParseGroupVersion(a.APIVersion)
			mapping, err := g.rcg.mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: a.Kind}, gv.Version)
			if err != nil {
				t.Fatal(err)
			}
			live, err := dyn.Resource(mapping.Resource).Namespace(a.Namespace).Get(context.Background(), a.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if live.GetUID() != a.UID || live.GetGeneration() != a.Generation {
				t.Errorf("%s: %s/%s applied as uid %s generation %d; live %s %d", what, a.Kind, a.Name, a.UID, a.Generation, live.GetUID(), live.GetGeneration())
			}
		}
	}
	rel, err := c.Install(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	check("install", rel)
	spec.Values = webappValues()
	spec.Values["image"] = "nginx:1.26"
	if rel, err = c.Upgrade(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	check("upgrade", rel)
	for _, a := range rel.Applied {
		if a.Kind == "Deployment" && a.Generation != 2 {
			t.Errorf("upgrade: the Deployment applied at generation %d, want 2 (its image changed)", a.Generation)
		}
	}
}
