package preview

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/rudder-operator/rudder/internal/manager"
	"github.com/rudder-operator/rudder/test/testenv"
)

var (
	cfg *rest.Config
	k8s client.Client
)

var webAppGVK = schema.GroupVersionKind{Group: "webapp.my.domain", Version: "v1", Kind: "WebApp"}

// TestMain runs the previews against a real API server and a real rudder
// manager (envtest, the embedded watches), which installs the releases a
// preview compares with.
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
		log := zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel))
		ctrl.SetLogger(log)
		mgr, err := manager.New(manager.Options{Config: cfg, MetricsAddr: "0", ProbeAddr: "0"}, log)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return testenv.RunWithManager(m, mgr)
	}()
	_ = env.Stop()
	os.Exit(code)
}

func webApp(ns, name, image string) *unstructured.Unstructured {
	return testenv.NewObject(webAppGVK, ns, name, map[string]any{"image": image, "port": int64(80), "replicas": int64(1)})
}

// deployed creates obj and waits until rudder deployed its release's first revision.
func deployed(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	if err := k8s.Create(ctx, obj); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "revision 1 deployed", func() error {
		return testenv.RevisionsAre(ctx, k8s, obj.GetNamespace(), "webapp-"+obj.GetName(), "1:deployed")
	})
}

func preview(t *testing.T, opts Options, objs ...*unstructured.Unstructured) (*Report, string) {
	t.Helper()
	if opts.Config == nil {
		opts.Config = cfg
	}
	r, err := Diff(context.Background(), opts, objs)
	if err != nil {
		t.Fatalf("Diff: %v", err)
	}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return r, b.String()
}

// changedLines returns the - and + lines of a unified diff, headers aside.
func changedLines(diff string) []string {
	var out []string
	for _, l := range strings.Split(diff, "\n") {
		if (strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+")) && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "+++") {
			out = append(out, l)
		}
	}
	return out
}

func objectOf(r *Report, kind string) *Object {
	for i := range r.Resources[0].Objects {
		if o := &r.Resources[0].Objects[i]; o.Kind == kind {
			return o
		}
	}
	return nil
}

func TestDiff_Release(t *testing.T) {
	ctx := context.Background()
	ns := testenv.Namespace(t, k8s, "preview-")
	before := storageSecrets(t, ns)

	// A resource that does not exist: the whole install, and nothing made.
	r, text := preview(t, Options{}, webApp(ns, "shop", "nginx:1.25"))
	res := r.Resources[0]
	if res.Action != Install || res.Revision != 1 || !r.Differs() || len(res.Objects) < 2 {
		t.Fatalf("new resource: action %s, revision %d, %d objects; want an install as revision 1:\n%s", res.Action, res.Revision, len(res.Objects), text)
	}
	for _, o := range res.Objects {
		if o.Change != Create || o.Live != nil || !strings.Contains(o.Diff, "--- /dev/null") {
			t.Errorf("new resource: %s %s is %s, want a create from /dev/null:\n%s", o.Kind, o.Name, o.Change, o.Diff)
		}
	}
	var dep unstructured.Unstructured
	dep.SetGroupVersionKind(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop"}, &dep); !apierrors.IsNotFound(err) {
		t.Errorf("the preview of an install made the Deployment (get: %v)", err)
	}
	if after := storageSecrets(t, ns); after != before {
		t.Errorf("the preview of an install stored a revision: %d storage Secrets, were %d", after, before)
	}

	// The same resource, once deployed: nothing.
	deployed(t, webApp(ns, "shop", "nginx:1.25"))
	r, text = preview(t, Options{}, webApp(ns, "shop", "nginx:1.25"))
	if r.Differs() || text != "" || r.Resources[0].Action != None || r.Resources[0].Deployed != 1 {
		t.Errorf("unchanged resource: action %s, deployed %d, differs %v; want nothing:\n%s", r.Resources[0].Action, r.Resources[0].Deployed, r.Differs(), text)
	}

	// An image change: the one line of the Deployment, as revision 2. The
	// chart's app.kubernetes.io/version label follows the image's tag: a new
	// registry, same tag, changes the image alone.
	r, text = preview(t, Options{}, webApp(ns, "shop", "mirror.example.com/nginx:1.25"))
	res = r.Resources[0]
	d := objectOf(r, "Deployment")
	if res.Action != Upgrade || res.Revision != 2 || d == nil || d.Change != Update {
		t.Fatalf("image change: action %s, revision %d, Deployment %v; want an upgrade to revision 2 changing the Deployment:\n%s", res.Action, res.Revision, d, text)
	}
	if got := changedLines(d.Diff); len(got) != 2 || !strings.HasPrefix(got[0], "-") || !strings.HasSuffix(got[0], " image: nginx:1.25") ||
		!strings.HasPrefix(got[1], "+") || !strings.HasSuffix(got[1], " image: mirror.example.com/nginx:1.25") {
		t.Errorf("image change: the Deployment's changed lines are %q, want the image's only:\n%s", got, d.Diff)
	}
	for _, o := range res.Objects {
		if o.Kind != "Deployment" && o.Change != Unchanged {
			t.Errorf("image change: %s %s is %s, want unchanged:\n%s", o.Kind, o.Name, o.Change, o.Diff)
		}
	}
	if strings.Contains(d.Diff, "managedFields") || strings.Contains(d.Diff, "resourceVersion") || strings.Contains(d.Diff, "status:") {
		t.Errorf("image change: the diff shows managed fields, metadata noise or status:\n%s", d.Diff)
	}
	if after := storageSecrets(t, ns); after != before+1 {
		t.Errorf("the preview of an upgrade stored a revision: %d storage Secrets, want %d", after, before+1)
	}
}

func TestDiff_DeletedObject(t *testing.T) {
	ns := testenv.Namespace(t, k8s, "preview-")
	withIngress := webApp(ns, "site", "nginx:1.25")
	_ = unstructured.SetNestedField(withIngress.Object, map[string]any{"enabled": true, "host": "site.example.com"}, "spec", "ingress")
	deployed(t, withIngress)
	r, text := preview(t, Options{}, webApp(ns, "site", "nginx:1.25"))
	in := objectOf(r, "Ingress")
	if in == nil || in.Change != Delete || in.Merged != nil || !strings.Contains(in.Diff, "+++ /dev/null") {
		t.Fatalf("ingress disabled: Ingress %v, want a delete to /dev/null:\n%s", in, text)
	}
}

func TestDiff_ValuesFromSecretMasked(t *testing.T) {
	ctx := context.Background()
	ns := testenv.Namespace(t, k8s, "preview-")
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"}, StringData: map[string]string{"token": "first-secret-token"}}
	if err := k8s.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	app := webApp(ns, "api", "nginx:1.25")
	app.SetAnnotations(map[string]string{"rudder.dev/values-from": "- kind: Secret\n  name: api\n  valuesKey: token\n  targetPath: config.API_TOKEN\n"})
	deployed(t, app.DeepCopy())
	if _, text := preview(t, Options{}, app); text != "" {
		t.Errorf("unchanged Secret: want nothing, got:\n%s", text)
	}
	// Paused, so that rudder does not upgrade the release while it is previewed.
	app.SetAnnotations(map[string]string{"rudder.dev/values-from": app.GetAnnotations()["rudder.dev/values-from"], "rudder.dev/paused": "true"})
	if err := k8s.Patch(ctx, app.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"annotations":{"rudder.dev/paused":"true"}}}`))); err != nil {
		t.Fatal(err)
	}
	// Until the reconciler has seen the pause, the Secret's change below
	// would upgrade the release, and a preview during that upgrade says so.
	testenv.Eventually(t, "the reconciler sees the pause", func() error {
		live := webApp(ns, "api", "")
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(live), live); err != nil {
			return err
		}
		if c := testenv.Condition(live, "Paused"); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("condition Paused %+v", c)
		}
		return nil
	})
	s.StringData = map[string]string{"token": "second-secret-token"}
	if err := k8s.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	r, text := preview(t, Options{}, app)
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"first-secret-token", "second-secret-token"} {
		if strings.Contains(text, secret) || strings.Contains(js.String(), secret) {
			t.Fatalf("the diff shows the Secret's value %q:\n%s", secret, text)
		}
	}
	d := objectOf(r, "Deployment")
	if notes := r.Resources[0].Notes; len(notes) != 1 || !strings.Contains(notes[0], "rudder.dev/paused") {
		t.Errorf("paused resource: notes %q, want one saying the reconciler changes nothing", notes)
	}
	if d == nil || r.Resources[0].Action != Upgrade {
		t.Fatalf("Secret changed: want an upgrade changing the Deployment:\n%s", text)
	}
	if got := changedLines(d.Diff); len(got) != 2 || !strings.Contains(got[0], "*** (before)") || !strings.Contains(got[1], "*** (after)") {
		t.Errorf("Secret changed: the Deployment's changed lines are %q, want the env var's, masked:\n%s", got, d.Diff)
	}
}

func TestDiff_ActsAsServiceAccount(t *testing.T) {
	ctx := context.Background()
	ns := testenv.Namespace(t, k8s, "preview-")
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"}}
	if err := k8s.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	app := webApp(ns, "locked", "nginx:1.25")
	app.SetAnnotations(map[string]string{"rudder.dev/service-account": "deployer"})
	// The Namespace does not allow the account: refused, as the reconciler refuses it.
	_, err := Diff(ctx, Options{Config: cfg}, []*unstructured.Unstructured{app})
	if err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Fatalf("Diff as a ServiceAccount its Namespace does not allow: error %v, want it refused", err)
	}
	patch := []byte(`{"metadata":{"annotations":{"rudder.dev/service-accounts":"deployer"}}}`)
	if err := k8s.Patch(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	_, err = Diff(ctx, Options{Config: cfg}, []*unstructured.Unstructured{app})
	if err == nil || !strings.Contains(err.Error(), "system:serviceaccount:"+ns+":deployer") {
		t.Fatalf("Diff as a ServiceAccount with no Role: error %v, want the API server's refusal naming the account", err)
	}

	// With a Role to read and dry-run the release's objects, it previews as that account.
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"", "apps", "networking.k8s.io", "autoscaling"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "create", "patch"}},
	}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "deployer"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "deployer"}}}
	for _, o := range []client.Object{role, binding} {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, "a preview as the account", func() error {
		r, err := Diff(ctx, Options{Config: cfg}, []*unstructured.Unstructured{app})
		if err != nil {
			return err
		}
		if r.Resources[0].ActingAs != "system:serviceaccount:"+ns+":deployer" {
			return fmt.Errorf("acting as %q", r.Resources[0].ActingAs)
		}
		return nil
	})
}

func TestDiff_Refusals(t *testing.T) {
	ns := testenv.Namespace(t, k8s, "preview-")
	other := testenv.NewObject(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gizmo"}, ns, "g", nil)
	if _, err := Diff(context.Background(), Options{Config: cfg}, []*unstructured.Unstructured{other}); err == nil ||
		!strings.Contains(err.Error(), "not a kind rudder serves") {
		t.Errorf("a kind rudder does not serve: error %v", err)
	}
	bad := webApp(ns, "bad", "nginx:1.25")
	_ = unstructured.SetNestedField(bad.Object, "many", "spec", "replicas")
	if _, err := Diff(context.Background(), Options{Config: cfg}, []*unstructured.Unstructured{bad}); err == nil ||
		!strings.Contains(err.Error(), "replicas") {
		t.Errorf("a spec the chart's schema refuses: error %v, want one naming replicas", err)
	}
}

// storageSecrets counts the Helm storage Secrets of namespace ns.
func storageSecrets(t *testing.T, ns string) int {
	t.Helper()
	var list corev1.SecretList
	if err := k8s.List(context.Background(), &list, client.InNamespace(ns), client.MatchingLabels{"owner": "helm"}); err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

// TestDiff_HooksWriteNothing previews a new Database, whose hooks would
// generate its credentials Secret and make its backup CronJob and claim:
// they run against a dry-run client, and nothing is made.
func TestDiff_HooksWriteNothing(t *testing.T) {
	ctx := context.Background()
	ns := testenv.Namespace(t, k8s, "preview-")
	db := testenv.NewObject(schema.GroupVersionKind{Group: "database.my.domain", Version: "v1", Kind: "Database"}, ns, "orders", map[string]any{
		"version": "16", "storageSize": "1Gi", "replicas": int64(1),
		"backup": map[string]any{"enabled": true, "schedule": "0 2 * * *", "storageSize": "1Gi"},
	})
	r, text := preview(t, Options{}, db)
	if res := r.Resources[0]; res.Action != Install || len(res.Notes) > 0 || objectOf(r, "StatefulSet") == nil {
		t.Fatalf("new Database: action %s, notes %q; want an install with its StatefulSet and no failed hook:\n%s", res.Action, res.Notes, text)
	}
	for _, list := range []client.ObjectList{&corev1.SecretList{}, &corev1.PersistentVolumeClaimList{}, &unstructured.UnstructuredList{}} {
		if u, ok := list.(*unstructured.UnstructuredList); ok {
			u.SetGroupVersionKind(schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "CronJobList"})
		}
		if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if n := meta.LenList(list); n > 0 {
			t.Errorf("the preview's hooks made %d %T in the namespace", n, list)
		}
	}
}
