package leak_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/internal/hook/backup"
	"github.com/rudder-operator/rudder/internal/hook/password"
	"github.com/rudder-operator/rudder/internal/manager"
	"github.com/rudder-operator/rudder/test/testenv"
)

// betaPassword is the password of the Secret the test provides for Database
// beta. URL-escaping changes it, so its escaped forms are searched too.
const betaPassword = "Beta pass/w0rd:+@#?-Q7zK9x~"

var (
	databaseGVK = schema.GroupVersionKind{Group: "database.my.domain", Version: "v1", Kind: "Database"}
	// customKinds are the kinds of the embedded watches.yaml.
	customKinds = []schema.GroupVersionKind{
		{Group: "webapp.my.domain", Version: "v1", Kind: "WebApp"},
		{Group: "samplecrd.k8s.io", Version: "v1", Kind: "Network"},
		databaseGVK,
	}
)

// TestGeneratedPassword_NeverLeaks runs two Databases through install,
// upgrade, a backup and deletion under a real manager, then searches Helm
// release storage, every object of the namespace (every version a watch
// delivered, and lists before and after the deletion), every event and the
// manager's whole log for their passwords: the only place either may be is
// its own credentials Secret.
func TestGeneratedPassword_NeverLeaks(t *testing.T) {
	began := time.Now()
	logs := &syncBuffer{}
	// Level -10: every V(n) line, Helm's debug output included. At this
	// level controller-runtime's zap does not sample: no line is dropped.
	log := zap.New(zap.WriteTo(logs), zap.Level(zapcore.Level(-10)))
	// As manager.Run wires it: client-go's own logs land there too.
	ctrl.SetLogger(log)
	klog.SetLogger(log.WithName("client-go"))

	env, cfg, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c := newClients(t, cfg)
	stopManager := startManager(t, cfg, log)
	ctx := quiet(t.Context())

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "leak-"}}
	if err := c.k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	resources := namespacedResources(t, c.discovery)
	rec := record(t, c.dynamic, ns.Name, resources)

	// beta reads credentials the test provides; alpha gets generated ones.
	betaSecret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "beta-db-login", Namespace: ns.Name},
		Data:       map[string][]byte{"username": []byte("shop_owner"), "password": []byte(betaPassword)},
	}
	if err := c.k8s.Create(ctx, betaSecret); err != nil {
		t.Fatal(err)
	}
	dbs := []*unstructured.Unstructured{
		newDatabase(ns.Name, "alpha", nil),
		newDatabase(ns.Name, "beta", map[string]any{"secretName": betaSecret.Name}),
	}
	for _, db := range dbs {
		if err := c.k8s.Create(ctx, db); err != nil {
			t.Fatalf("create Database %s: %v", db.GetName(), err)
		}
	}
	for _, db := range dbs {
		testenv.Eventually(t, "release database-"+db.GetName()+" revision 1 deployed", func() error {
			return testenv.RevisionsAre(ctx, c.k8s, ns.Name, "database-"+db.GetName(), "1:deployed")
		})
		testenv.Eventually(t, "Database "+db.GetName()+" status at revision 1", func() error {
			return released(ctx, c.k8s, db, 1)
		})
	}
	var alphaSecret corev1.Secret
	testenv.Eventually(t, "Secret alpha-credentials", func() error {
		return c.k8s.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: "alpha-credentials"}, &alphaSecret)
	})
	if got := hook.GeneratedForName(&alphaSecret); got != "Database/alpha" {
		t.Fatalf("Secret alpha-credentials: annotation %s = %q, want Database/alpha and its UID (a generated Secret)",
			password.GeneratedAnnotation, alphaSecret.Annotations[password.GeneratedAnnotation])
	}
	alphaPassword := string(alphaSecret.Data["password"])
	if len(alphaPassword) != password.Length {
		t.Fatalf("Secret alpha-credentials: password of %d characters, want %d", len(alphaPassword), password.Length)
	}
	s := &scanner{secrets: []secret{
		newSecret("Database alpha's generated password", alphaSecret.Name, alphaPassword),
		newSecret("Database beta's password", betaSecret.Name, betaPassword),
	}}

	// More work for the manager: an upgrade, then a backup on request.
	for _, db := range dbs {
		patch(t, c.k8s, db, `{"spec":{"resources":{"requests":{"cpu":"100m","memory":"128Mi"}}}}`)
	}
	for _, db := range dbs {
		testenv.Eventually(t, "release database-"+db.GetName()+" revision 2 deployed", func() error {
			return testenv.RevisionsAre(ctx, c.k8s, ns.Name, "database-"+db.GetName(), "1:superseded", "2:deployed")
		})
		testenv.Eventually(t, "Database "+db.GetName()+" status at revision 2", func() error {
			return released(ctx, c.k8s, db, 2)
		})
	}
	for _, db := range dbs {
		patch(t, c.k8s, db, fmt.Sprintf(`{"metadata":{"annotations":{%q:"1"}}}`, backup.AnnotationBackupNow))
	}
	for _, db := range dbs {
		testenv.Eventually(t, "backup Job of Database "+db.GetName(), func() error {
			return backupJobExists(ctx, c.k8s, ns.Name, db.GetName())
		})
	}

	// Uninstalling deletes Helm's storage and the custom resources go:
	// capture both first, with every object as it is now.
	var n tally
	n.releases = s.helmStorage(t, c.clientset, ns.Name)
	n.customResources = s.customResources(t, c.k8s, ns.Name)
	n.before = s.objects(t, c.dynamic, ns.Name, resources, "listed before the deletion")

	for _, db := range dbs {
		if err := c.k8s.Delete(ctx, db); err != nil {
			t.Fatalf("delete Database %s: %v", db.GetName(), err)
		}
	}
	for _, db := range dbs {
		testenv.Eventually(t, "Database "+db.GetName()+" gone", func() error {
			return testenv.Gone(c.k8s.Get(ctx, client.ObjectKeyFromObject(db), newDatabase(ns.Name, "", nil)))
		})
		testenv.Eventually(t, "release database-"+db.GetName()+" gone", func() error {
			return testenv.RevisionsAre(ctx, c.k8s, ns.Name, "database-"+db.GetName())
		})
	}
	// Stopped first, so that the events it still had to send are written
	// and its log is complete.
	stopManager()

	n.coreEvents, n.newEvents = s.events(t, c.k8s, ns.Name)
	n.after = s.objects(t, c.dynamic, ns.Name, resources, "listed at the end")
	versions := rec.stop()
	n.versions = len(versions)
	n.watched, n.decoded = s.watched(versions)
	logBytes := logs.Bytes()
	n.logBytes, n.logLines = len(logBytes), s.log(logBytes)

	checkControls(t, ctx, c.k8s, ns.Name, s, n, logBytes)
	for i, f := range s.findings {
		if i == 50 {
			t.Errorf("... and %d findings more", len(s.findings)-i)
			break
		}
		t.Error(f)
	}
	t.Logf("scanned: %s; in %s", n, time.Since(began).Round(time.Millisecond))
}

// tally counts what the test scanned.
type tally struct {
	releases, decoded, customResources, versions, before, after int
	coreEvents, newEvents, logLines, logBytes                   int
	watched                                                     map[string]int
}

func (n tally) String() string {
	kinds := make([]string, 0, len(n.watched))
	for k, v := range n.watched {
		kinds = append(kinds, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(kinds)
	return fmt.Sprintf("%d Helm releases from storage and %d decoded from watched Secrets; %d custom resources; "+
		"%d object versions watched (%s); %d objects listed before the deletion, %d at the end; "+
		"%d core/v1 and %d events.k8s.io/v1 events; %d log lines (%d bytes)",
		n.releases, n.decoded, n.customResources, n.versions, strings.Join(kinds, " "), n.before, n.after,
		n.coreEvents, n.newEvents, n.logLines, n.logBytes)
}

// checkControls fails the test when the scan could not have found a leak:
// it must find each password where it belongs (alpha's also base64-encoded
// inside the encoded uri), have seen the objects a Database makes, and the
// log must hold the manager's work at debug level.
func checkControls(t *testing.T, ctx context.Context, k8s client.Client, ns string, s *scanner, n tally, logBytes []byte) {
	t.Helper()
	for _, sec := range s.secrets {
		var holder corev1.Secret
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: sec.holder}, &holder); err != nil {
			t.Fatalf("Secret %s: %v", sec.holder, err)
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&holder)
		if err != nil {
			t.Fatal(err)
		}
		if forms := sec.foundIn(obj); !slices.Contains(forms, "base64") {
			t.Errorf("control: the scan does not find %s (base64) in its own Secret %s (found: %v)", sec.label, sec.holder, forms)
		}
		if uri, ok := holder.Data["uri"]; ok && !slices.Contains(sec.foundIn(uri), "raw") {
			t.Errorf("control: the scan does not find %s in the uri of Secret %s", sec.label, sec.holder)
		}
		if uri, _, _ := unstructured.NestedString(obj, "data", "uri"); uri != "" && !slices.ContainsFunc(sec.foundIn(uri), isEmbeddedBase64) {
			t.Errorf("control: the scan does not find %s base64-encoded inside the encoded uri of Secret %s", sec.label, sec.holder)
		}
	}
	for _, kind := range []string{"Database", "Secret", "StatefulSet", "Service", "CronJob", "Job", "PersistentVolumeClaim", "Event"} {
		if n.watched[kind] == 0 {
			t.Errorf("control: the watch saw no %s: the namespace was not watched as it should be", kind)
		}
	}
	if n.releases < 4 || n.decoded < 4 {
		t.Errorf("control: %d releases read from Helm storage and %d watched versions decoded, want at least 4 each (2 revisions of 2 releases)", n.releases, n.decoded)
	}
	if n.coreEvents == 0 || n.newEvents == 0 {
		t.Errorf("control: %d core/v1 and %d events.k8s.io/v1 events, want some of each", n.coreEvents, n.newEvents)
	}
	if !bytes.Contains(logBytes, []byte("database-alpha")) || !bytes.Contains(logBytes, []byte(`"level":"debug"`)) {
		t.Errorf("control: the log (%d bytes) does not mention database-alpha at debug level: it was not captured", len(logBytes))
	}
}

// clients are the ways the test reads the cluster.
type clients struct {
	k8s       client.Client
	clientset kubernetes.Interface
	dynamic   dynamic.Interface
	discovery discovery.DiscoveryInterface
}

func newClients(t *testing.T, cfg *rest.Config) clients {
	t.Helper()
	k8s, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return clients{k8s: k8s, clientset: cs, dynamic: dyn, discovery: cs.Discovery()}
}

// quiet keeps the test's own requests out of the log under test: client-go
// logs request and response bodies to the context's logger from V(8) on.
func quiet(ctx context.Context) context.Context { return klog.NewContext(ctx, logr.Discard()) }

// quietSecrets reads Secrets for Helm's storage driver, which passes
// context.Background(), with the quiet context instead.
type quietSecrets struct{ typedcorev1.SecretInterface }

func (q quietSecrets) Get(ctx context.Context, name string, o metav1.GetOptions) (*corev1.Secret, error) {
	return q.SecretInterface.Get(quiet(ctx), name, o)
}

func (q quietSecrets) List(ctx context.Context, o metav1.ListOptions) (*corev1.SecretList, error) {
	return q.SecretInterface.List(quiet(ctx), o)
}

// startManager runs rudder's manager on the embedded watches.yaml until the
// returned function (or the test's cleanup) stops it.
func startManager(t *testing.T, cfg *rest.Config, log logr.Logger) func() {
	t.Helper()
	mgr, err := manager.New(manager.Options{Config: cfg, MetricsAddr: "0", ProbeAddr: "0"}, log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("manager: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func newDatabase(ns, name string, credentials map[string]any) *unstructured.Unstructured {
	spec := map[string]any{
		"version": "16", "storageSize": "1Gi", "database": "shop",
		"backup":     map[string]any{"enabled": true, "schedule": "0 2 * * *", "storageSize": "1Gi", "retention": int64(2)},
		"monitoring": map[string]any{"enabled": true},
	}
	if credentials != nil {
		spec["credentials"] = credentials
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(databaseGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func patch(t *testing.T, k8s client.Client, db *unstructured.Unstructured, p string) {
	t.Helper()
	ref := newDatabase(db.GetNamespace(), db.GetName(), nil)
	if err := k8s.Patch(quiet(t.Context()), ref, client.RawPatch(types.MergePatchType, []byte(p))); err != nil {
		t.Fatalf("patch Database %s with %s: %v", db.GetName(), p, err)
	}
}

// released checks that a Database's status was written from its current
// generation, names the release revision, and has its credentials ready.
func released(ctx context.Context, k8s client.Client, db *unstructured.Unstructured, revision int64) error {
	u := newDatabase(db.GetNamespace(), db.GetName(), nil)
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
		return err
	}
	gen := u.GetGeneration()
	observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	rev, _, _ := unstructured.NestedInt64(u.Object, "status", "release", "revision")
	if observed != gen || rev != revision {
		return fmt.Errorf("status observedGeneration %d, release revision %d; want %d, %d (status: %v)", observed, rev, gen, revision, u.Object["status"])
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == password.Condition {
			if m["status"] != string(metav1.ConditionTrue) || fmt.Sprint(m["observedGeneration"]) != fmt.Sprint(gen) {
				return fmt.Errorf("condition %s: %v", password.Condition, m)
			}
			return nil
		}
	}
	return fmt.Errorf("no %s condition (status: %v)", password.Condition, u.Object["status"])
}

func backupJobExists(ctx context.Context, k8s client.Client, ns, name string) error {
	var jobs batchv1.JobList
	if err := k8s.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabels{backup.LabelBackupOf: name}); err != nil {
		return err
	}
	for _, j := range jobs.Items {
		if j.Annotations[backup.AnnotationBackupNow] == "1" {
			return nil
		}
	}
	return fmt.Errorf("no Job requested by %s=1 among %d", backup.AnnotationBackupNow, len(jobs.Items))
}

// A secret is a password the test looks for, in every form it searches,
// and the one Secret allowed to hold it.
type secret struct {
	label  string
	holder string
	forms  []form
}

type form struct{ name, text string }

// newSecret lists the forms of a password to search: as is, base64-encoded
// (alone, and inside a longer encoded value at each of the three alignments:
// the characters that depend on the password only) and URL-escaped.
func newSecret(label, holder, pw string) secret {
	s := secret{label: label, holder: holder}
	add := func(name, text string) {
		if len(text) < 12 || slices.ContainsFunc(s.forms, func(f form) bool { return f.text == text }) {
			return
		}
		s.forms = append(s.forms, form{name, text})
	}
	add("raw", pw)
	add("base64", base64.StdEncoding.EncodeToString([]byte(pw)))
	for offset := range 3 {
		enc := base64.StdEncoding.EncodeToString(append(make([]byte, offset), pw...))
		first := 0
		if offset > 0 {
			first = 4
		}
		add(fmt.Sprintf("base64 inside a longer value, offset %d", offset), enc[first:(offset+len(pw))/3*4])
	}
	add("URL query-escaped", url.QueryEscape(pw))
	add("URL path-escaped", url.PathEscape(pw))
	add("URL userinfo-escaped", strings.TrimPrefix(url.UserPassword("u", pw).String(), "u:"))
	return s
}

func isEmbeddedBase64(form string) bool { return strings.HasPrefix(form, "base64 inside") }

// foundIn names the forms of the password found anywhere in v.
func (s secret) foundIn(v any) []string {
	var found []string
	walk("", v, func(_, str string) {
		for _, f := range s.forms {
			if strings.Contains(str, f.text) && !slices.Contains(found, f.name) {
				found = append(found, f.name)
			}
		}
	})
	return found
}

// walk calls f with the path and text of every string in v, map keys
// included; a []byte counts as a string.
func walk(path string, v any, f func(path, s string)) {
	switch v := v.(type) {
	case string:
		f(path, v)
	case []byte:
		f(path, string(v))
	case map[string]any:
		for k, e := range v {
			f(path+" (a key)", k)
			walk(path+"."+k, e, f)
		}
	case []any:
		for i, e := range v {
			walk(fmt.Sprintf("%s[%d]", path, i), e, f)
		}
	}
}

// scanner collects every place a password was found where it must not be.
type scanner struct {
	secrets  []secret
	findings []string
}

// text searches str, which is in where, for every password but the one
// whose holder str belongs to; a hex dump in str (client-go logs binary
// bodies so) is searched decoded, too.
func (s *scanner) text(where, holder, str string) {
	s.search(where, holder, str)
	if b := undump(str); len(b) > 0 {
		s.search(where+" (hex dump, decoded)", holder, string(b))
	}
}

func (s *scanner) search(where, holder, str string) {
	for _, sec := range s.secrets {
		if holder != "" && holder == sec.holder {
			continue
		}
		for _, f := range sec.forms {
			if i := strings.Index(str, f.text); i >= 0 {
				finding := fmt.Sprintf("%s (%s) found in %s: %s", sec.label, f.name, where, s.excerpt(str, i, len(f.text)))
				if !slices.Contains(s.findings, finding) {
					s.findings = append(s.findings, finding)
				}
			}
		}
	}
}

// undump reverses hex.Dump: the bytes of every line of s that has the
// shape of one ("00000010  65 74 12 a7 ...  |et..|").
func undump(s string) []byte {
	var out []byte
	for _, line := range strings.Split(s, "\n") {
		if len(line) < 12 || line[8:10] != "  " {
			continue
		}
		if _, err := hex.DecodeString(line[:8]); err != nil {
			continue
		}
		cols, _, _ := strings.Cut(line[10:], "  |")
		for _, f := range strings.Fields(cols) {
			b, err := hex.DecodeString(f)
			if err != nil || len(b) != 1 {
				break
			}
			out = append(out, b[0])
		}
	}
	return out
}

// excerpt quotes str around a match, every password form masked.
func (s *scanner) excerpt(str string, i, n int) string {
	from, to := max(0, i-100), min(len(str), i+n+100)
	ex := str[from:to]
	for _, sec := range s.secrets {
		for _, f := range sec.forms {
			ex = strings.ReplaceAll(ex, f.text, "<"+sec.holder+" password>")
		}
	}
	return fmt.Sprintf("%q", ex)
}

func (s *scanner) walk(where, holder string, v any) {
	walk("", v, func(path, str string) { s.text(where+" at "+path, holder, str) })
}

// object scans a whole object, metadata and status included.
func (s *scanner) object(when string, u *unstructured.Unstructured) {
	holder := ""
	if u.GetKind() == "Secret" && u.GetAPIVersion() == "v1" {
		holder = u.GetName()
	}
	where := fmt.Sprintf("%s %s %s (resourceVersion %s, %s)", u.GetAPIVersion(), u.GetKind(), u.GetName(), u.GetResourceVersion(), when)
	s.walk(where, holder, u.Object)
}

// helmStorage reads every release revision stored in the namespace with
// Helm's own storage driver and scans it whole: values, manifest, notes,
// description and the rest of the release.
func (s *scanner) helmStorage(t *testing.T, cs kubernetes.Interface, ns string) int {
	t.Helper()
	st := storage.Init(driver.NewSecrets(quietSecrets{cs.CoreV1().Secrets(ns)}))
	rels, err := st.ListReleases()
	if err != nil {
		t.Fatalf("Helm storage: %v", err)
	}
	for _, r := range rels {
		rel := r.(*release.Release)
		where := fmt.Sprintf("Helm release %s revision %d", rel.Name, rel.Version)
		if rel.Info == nil || len(rel.Config) == 0 || rel.Manifest == "" || rel.Info.Notes == "" {
			t.Errorf("%s decoded without values, manifest or notes: scanning it proves nothing", where)
			continue
		}
		s.walk(where+" values", "", rel.Config)
		s.text(where+" manifest", "", rel.Manifest)
		s.text(where+" description", "", rel.Info.Description)
		s.text(where+" notes", "", rel.Info.Notes)
		whole, err := json.Marshal(rel)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(whole, &v); err != nil {
			t.Fatal(err)
		}
		s.walk(where, "", v)
	}
	if hist, err := st.History("database-alpha"); err != nil || len(hist) != 2 {
		t.Errorf("Helm storage: history of database-alpha has %d revisions (%v), want 2", len(hist), err)
	}
	return len(rels)
}

// customResources scans every custom resource of the namespace, of every
// kind rudder serves, status included.
func (s *scanner) customResources(t *testing.T, k8s client.Client, ns string) int {
	t.Helper()
	n := 0
	for _, gvk := range customKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := k8s.List(quiet(t.Context()), list, client.InNamespace(ns)); err != nil {
			t.Fatalf("list %s: %v", gvk.Kind, err)
		}
		for i := range list.Items {
			if _, ok := list.Items[i].Object["status"]; !ok {
				t.Errorf("%s %s has no status to scan", gvk.Kind, list.Items[i].GetName())
			}
			s.object("listed before the deletion", &list.Items[i])
			n++
		}
	}
	return n
}

// objects scans every object of every listable resource of the namespace.
func (s *scanner) objects(t *testing.T, dyn dynamic.Interface, ns string, resources []resource, when string) int {
	t.Helper()
	n := 0
	for _, r := range resources {
		list, err := dyn.Resource(r.gvr).Namespace(ns).List(quiet(t.Context()), metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list %s: %v", r.gvr, err)
		}
		for i := range list.Items {
			s.object(when, &list.Items[i])
			n++
		}
	}
	return n
}

// events scans the namespace's events through both APIs.
func (s *scanner) events(t *testing.T, k8s client.Client, ns string) (coreEvents, newEvents int) {
	t.Helper()
	var core corev1.EventList
	var events eventsv1.EventList
	for _, list := range []client.ObjectList{&core, &events} {
		if err := k8s.List(quiet(t.Context()), list, client.InNamespace(ns)); err != nil {
			t.Fatalf("list events: %v", err)
		}
	}
	scan := func(api string, obj runtime.Object, name string) {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		s.walk(fmt.Sprintf("%s Event %s", api, name), "", m)
	}
	for i := range core.Items {
		scan("core/v1", &core.Items[i], core.Items[i].Name)
	}
	for i := range events.Items {
		scan("events.k8s.io/v1", &events.Items[i], events.Items[i].Name)
	}
	return len(core.Items), len(events.Items)
}

// watched scans every version of every object the watch delivered, and
// decodes every version of Helm's storage Secrets on the way. It returns
// the versions seen per kind and the number of releases decoded.
func (s *scanner) watched(versions []*unstructured.Unstructured) (map[string]int, int) {
	kinds := map[string]int{}
	decoded := 0
	for _, u := range versions {
		kinds[u.GetKind()]++
		s.object("watched", u)
		if u.GetKind() != "Secret" || u.GetLabels()["owner"] != "helm" {
			continue
		}
		where := fmt.Sprintf("Helm release in Secret %s (resourceVersion %s, watched)", u.GetName(), u.GetResourceVersion())
		rel, err := helmRelease(u)
		if err != nil {
			s.findings = append(s.findings, fmt.Sprintf("%s: cannot decode: %v", where, err))
			continue
		}
		s.walk(where, "", rel)
		decoded++
	}
	return kinds, decoded
}

// helmRelease decodes the release a Helm storage Secret holds: base64, then
// gzip, then JSON (the Secret's data field adds its own base64 on top).
func helmRelease(u *unstructured.Unstructured) (any, error) {
	data, _, _ := unstructured.NestedString(u.Object, "data", "release")
	helmB64, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, err
	}
	b, err := base64.StdEncoding.DecodeString(string(helmB64))
	if err != nil {
		return nil, err
	}
	if bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		if b, err = io.ReadAll(zr); err != nil {
			return nil, err
		}
	}
	var rel any
	return rel, json.Unmarshal(b, &rel)
}

// log scans every line of the log, field by field when it is JSON.
func (s *scanner) log(b []byte) int {
	n := 0
	for i, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		n++
		where := fmt.Sprintf("the manager's log, line %d", i+1)
		var v map[string]any
		if json.Unmarshal(line, &v) == nil {
			where += logContext(v)
			s.walk(where, "", v)
		} else {
			s.text(where, "", string(line))
		}
	}
	return n
}

// logContext names a JSON log line by its level, message, logger and the
// object a reconcile was at.
func logContext(line map[string]any) string {
	var parts []string
	for _, k := range []string{"level", "msg", "logger", "controller", "name", "reconcileID"} {
		if v, ok := line[k]; ok {
			parts = append(parts, fmt.Sprintf("%s=%q", k, fmt.Sprint(v)))
		}
	}
	return " (" + strings.Join(parts, " ") + ")"
}

// resource is a listable, watchable resource of a namespace.
type resource struct {
	gvr  schema.GroupVersionResource
	kind string
}

func namespacedResources(t *testing.T, dc discovery.DiscoveryInterface) []resource {
	t.Helper()
	lists, err := dc.ServerPreferredNamespacedResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		t.Fatalf("discovery: %v", err)
	}
	var out []resource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.APIResources {
			if !strings.Contains(r.Name, "/") && slices.Contains(r.Verbs, "list") && slices.Contains(r.Verbs, "watch") {
				out = append(out, resource{gvr: gv.WithResource(r.Name), kind: r.Kind})
			}
		}
	}
	if !slices.ContainsFunc(out, func(r resource) bool { return r.kind == "Database" }) {
		t.Fatal("discovery lists no Database resource")
	}
	return out
}

// recorder keeps every version of every object of a namespace that its
// watches deliver: a status or an object that changes again later is
// scanned as it was, too.
type recorder struct {
	cancel   context.CancelFunc
	running  sync.WaitGroup
	mu       sync.Mutex
	seen     map[string]bool
	versions []*unstructured.Unstructured
}

func record(t *testing.T, dyn dynamic.Interface, ns string, resources []resource) *recorder {
	t.Helper()
	ctx, cancel := context.WithCancel(quiet(context.Background()))
	r := &recorder{cancel: cancel, seen: map[string]bool{}}
	t.Cleanup(func() { r.stop() })
	handler := cache.ResourceEventHandlerFuncs{AddFunc: r.add, UpdateFunc: func(_, obj any) { r.add(obj) }, DeleteFunc: r.add}
	var synced []cache.InformerSynced
	for _, res := range resources {
		ri := dyn.Resource(res.gvr).Namespace(ns)
		lw := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return ri.List(quiet(ctx), o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return ri.Watch(quiet(ctx), o)
			},
		}
		inf := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
		if _, err := inf.AddEventHandler(handler); err != nil {
			t.Fatal(err)
		}
		r.running.Go(func() { inf.RunWithContext(ctx) })
		synced = append(synced, inf.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		t.Fatal("watching the namespace: never synced")
	}
	return r
}

func (r *recorder) add(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	key := string(u.GetUID()) + "@" + u.GetResourceVersion()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.seen[key] {
		r.seen[key] = true
		r.versions = append(r.versions, u.DeepCopy())
	}
}

// stop ends the watches and returns every version seen.
func (r *recorder) stop() []*unstructured.Unstructured {
	r.cancel()
	r.running.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.versions)
}

// syncBuffer is a bytes.Buffer safe for the manager's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Bytes returns a copy of what was written so far.
func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}
