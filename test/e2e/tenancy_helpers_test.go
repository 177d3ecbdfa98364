//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Helpers of the tenancy tests (issue 33): a tenant that acts through
// kubectl --as, the namespaces of one case, forged Helm storage Secrets, and
// waits that fail at once when an attack succeeds.

// Fixtures of the tenancy tests, under test/e2e/testdata/tenancy.
const (
	// tenancyWatches is the repository's watches.yaml with Network under
	// outOfBand: keep.
	tenancyWatches = "test/e2e/testdata/tenancy/watches.yaml"
	// tenantRole is the tenant's Role and RoleBinding, applied with -n.
	tenantRole = "test/e2e/testdata/tenancy/tenant.yaml"
)

const (
	// tenantUser is who the tenant is: kubectl --as=tenant-a.
	tenantUser = "tenant-a"
	// deployer is the lockdown account (--default-service-account) of each
	// tenant namespace.
	deployer = "deployer"
	// actingAsSelf is status.actingAs when rudder acts with its own rights.
	actingAsSelf = "rudder"
)

// tenancyMode is how the operator of a group of cases runs.
type tenancyMode struct {
	name string
	// lockdown runs the manager with --default-service-account=deployer.
	lockdown bool
}

// tenancy is one case of TestTenancy: the tenant's namespace a, in which it
// may manage rudder's kinds, and namespace b, in which it has no rights.
type tenancy struct {
	t    *testing.T
	mode tenancyMode
	op   *operator
	a, b string
}

// tenancyNamespaces names the two namespaces of case c in mode m.
func tenancyNamespaces(m tenancyMode, c string) (a, b string) {
	return "tn-" + m.name + "-" + c + "-a", "tn-" + m.name + "-" + c + "-b"
}

// tenancyOperator starts an operator of mode m watching nss, stopped when t
// ends (after the namespaces of its subtests are gone).
func tenancyOperator(t *testing.T, m tenancyMode, nss []string, extraArgs ...string) *operator {
	t.Helper()
	var o *operator
	t.Cleanup(func() {
		if o == nil || o.cur == nil {
			return
		}
		select {
		case <-o.cur.exited:
			return
		default:
		}
		if err := o.cur.stop(shutdownTimeout); err != nil {
			t.Errorf("stopping the operator %s: expected exit code 0 after SIGTERM; %v", o.name, err)
		}
	})
	for _, ns := range nss {
		privateNamespaces.Store(ns, true)
	}
	args := append([]string{"--watches-file=" + filepath.Join(root, tenancyWatches)}, extraArgs...)
	if m.lockdown {
		args = append(args, "--default-service-account="+deployer)
	}
	var err error
	if o, err = startOperator("tenancy-"+m.name+"-"+strings.ReplaceAll(t.Name(), "/", "-"), nss, args...); err != nil {
		if o != nil && o.cur != nil {
			t.Logf("the end of its log %s:\n%s", o.cur.logPath, o.cur.tail(20))
		}
		t.Fatalf("starting the %s operator (flags %v): %v", m.name, args, err)
	}
	o.logOnFailure(t)
	t.Cleanup(func() { o.ensureRunning(t) })
	return o
}

// newTenancy creates case c's namespaces, binds the tenant's Role in a and,
// in lockdown mode, creates a's account with the Roles of rudder's kinds;
// then it checks that the tenant can do what it should and no more, so that
// a refusal seen later is rudder's.
func newTenancy(t *testing.T, m tenancyMode, op *operator, c string) *tenancy {
	t.Helper()
	tn := &tenancy{t: t, mode: m, op: op}
	tn.a, tn.b = tenancyNamespaces(m, c)
	createNamespaces(t, tn.a, tn.b)
	kubectl(t, "apply", "-n", tn.a, "-f", filepath.Join(root, tenantRole))
	if m.lockdown {
		tn.bindDeployer(tn.a, deployerKinds(c)...)
	}
	for _, can := range []struct {
		verb, resource, ns string
		want               bool
	}{
		{"create", "webapps.webapp.my.domain", tn.a, true},
		{"create", "secrets", tn.a, true},
		{"get", "secrets", tn.a, false},
		{"get", "deployments.apps", tn.a, false},
		{"create", "configmaps", tn.b, false},
		{"get", "databases.database.my.domain", tn.b, false},
		{"create", "roles.rbac.authorization.k8s.io", tn.b, false},
	} {
		out, _, _ := runFull("kubectl", "auth", "can-i", can.verb, can.resource, "-n", can.ns, "--as="+tenantUser)
		if got := strings.TrimSpace(out) == "yes"; got != can.want {
			t.Fatalf("harness: kubectl auth can-i %s %s -n %s --as=%s says %q, want %v", can.verb, can.resource, can.ns, tenantUser, out, can.want)
		}
	}
	return tn
}

// deployerKinds are the kinds whose Roles case c's lockdown account holds.
// The values-from case's namespace serves WebApps only: an account for a kind
// whose chart renders no Secret holds no right on Secrets, which is what keeps
// a tenant from reading one through valuesFrom. (A Database's account may
// write Secrets, its credentials, and so may read them.)
func deployerKinds(c string) []string {
	if c == "values-from" {
		return []string{"webapp"}
	}
	return []string{"webapp", "network", "database"}
}

// bindDeployer creates ServiceAccount deployer in ns with the Roles of
// kinds, as docs/security.md says to: what `rudder rbac` prints.
func (tn *tenancy) bindDeployer(ns string, kinds ...string) {
	tn.t.Helper()
	args := append(append([]string{"rbac"}, kinds...), "-n", ns, "--service-account", deployer)
	roles, err := run("rudder", args...)
	if err != nil {
		tn.t.Fatal(err)
	}
	apply(tn.t, roles)
}

// account is the user rudder should act as in ns: the lockdown account, or
// rudder itself.
func (tn *tenancy) account(ns string) string {
	if tn.mode.lockdown {
		return serviceAccountUser(ns, deployer)
	}
	return actingAsSelf
}

func serviceAccountUser(ns, name string) string {
	return "system:serviceaccount:" + ns + ":" + name
}

// asTenant runs kubectl as the tenant and returns its stdout; it fails t
// when the command fails.
func (tn *tenancy) asTenant(args ...string) string {
	tn.t.Helper()
	tn.t.Logf("$ kubectl --as=%s %s", tenantUser, strings.Join(args, " "))
	return kubectl(tn.t, append([]string{"--as=" + tenantUser}, args...)...)
}

// tenantCreates creates obj (any JSON-encodable object) as the tenant, with
// kubectl create: not apply, whose last-applied annotation a large object
// would not fit.
func (tn *tenancy) tenantCreates(obj any) {
	tn.t.Helper()
	tn.asTenant("create", "-f", writeManifest(tn.t, obj))
}

// writeManifest writes obj as JSON into a file of the test's and returns its path.
func writeManifest(t *testing.T, obj any) string {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(t.TempDir(), "manifest-*.json")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// storageSecret is a Secret shaped like Helm's storage of revision version
// of release in ns (driver "secret"), with status deployed, holding body as
// its "release" key.
func storageSecret(ns, releaseName string, version int, body []byte) map[string]any {
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"type":       "helm.sh/release.v1",
		"metadata": map[string]any{
			"name":      fmt.Sprintf("sh.helm.release.v1.%s.v%d", releaseName, version),
			"namespace": ns,
			"labels": map[string]string{
				"name":    releaseName,
				"owner":   "helm",
				"status":  "deployed",
				"version": strconv.Itoa(version),
			},
		},
		"data": map[string]string{"release": base64.StdEncoding.EncodeToString(body)},
	}
}

// forgedRevision is what a tenant who cannot read the release writes to make
// rudder apply manifest: revision version of release in ns, deployed, of a
// chart named chartName with no templates (a rollback applies the stored
// manifest, not the chart), encoded as Helm's storage encodes a release
// (base64 of gzipped JSON).
func forgedRevision(t *testing.T, ns, releaseName, chartName string, version int, manifest string) map[string]any {
	t.Helper()
	now := time.Now()
	rel := &release.Release{
		Name:      releaseName,
		Namespace: ns,
		Version:   version,
		Info: &release.Info{
			FirstDeployed: now, LastDeployed: now,
			Status:      rcommon.StatusDeployed,
			Description: "Upgrade complete",
		},
		Chart: &chart.Chart{Metadata: &chart.Metadata{
			APIVersion: chart.APIVersionV2, Name: chartName, Version: "0.1.0", AppVersion: "1.0.0",
		}},
		Config:   map[string]any{},
		Manifest: manifest,
	}
	raw, err := json.Marshal(rel)
	if err != nil {
		t.Fatal(err)
	}
	return storageSecret(ns, releaseName, version, []byte(base64.StdEncoding.EncodeToString(gzipped(t, raw))))
}

// takeoverManifest is the manifest of a forged revision: a Role and a
// RoleBinding in ns that would give the tenant every right on Secrets
// there, and a ConfigMap of ns named kept, which an admin made and which a
// rudder that acts on the revision would overwrite or delete.
func takeoverManifest(ns, kept string) string {
	return fmt.Sprintf(`---
# Source: forged/templates/role.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: takeover
  namespace: %[1]s
rules:
  - apiGroups: [""]
    resources: [secrets]
    verbs: ["*"]
---
# Source: forged/templates/rolebinding.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: takeover
  namespace: %[1]s
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: takeover
subjects:
  - apiGroup: rbac.authorization.k8s.io
    kind: User
    name: %[3]s
---
# Source: forged/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: %[2]s
  namespace: %[1]s
data:
  owner: %[3]s
`, ns, kept, tenantUser)
}

// keptObject is an object an admin made in the namespace the tenant has no
// rights in, which must stay as it is.
type keptObject struct {
	ns, name string
	uid      string
	data     map[string]string
}

// adminConfigMap creates ConfigMap ns/name as the admin and returns it as
// kept.
func adminConfigMap(t *testing.T, ns, name string) keptObject {
	t.Helper()
	kubectl(t, "create", "configmap", name, "-n", ns, "--from-literal=owner=admin")
	var cm corev1.ConfigMap
	mustGetJSON(t, &cm, "configmap", name, "-n", ns)
	return keptObject{ns: ns, name: name, uid: string(cm.UID), data: cm.Data}
}

// unchanged says how the ConfigMap differs from when it was made.
func (k keptObject) unchanged() error {
	var cm corev1.ConfigMap
	found, err := getJSON(&cm, "configmap", k.name, "-n", k.ns)
	switch {
	case err != nil:
		return err
	case !found:
		return fmt.Errorf("ConfigMap %s/%s, the admin's, was deleted", k.ns, k.name)
	case string(cm.UID) != k.uid:
		return fmt.Errorf("ConfigMap %s/%s, the admin's, was deleted and made again (uid %s, was %s)", k.ns, k.name, cm.UID, k.uid)
	case !equalData(cm.Data, k.data):
		return fmt.Errorf("ConfigMap %s/%s, the admin's, was overwritten: data %v, was %v", k.ns, k.name, cm.Data, k.data)
	}
	return nil
}

func equalData(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// absent says which of the objects (kind/name, as kubectl names them)
// exist in ns.
func absent(ns string, objects ...string) error {
	var there []string
	for _, o := range objects {
		kind, name, _ := strings.Cut(o, "/")
		var obj metav1.PartialObjectMetadata
		found, err := getJSON(&obj, kind, name, "-n", ns)
		if err != nil {
			return err
		}
		if found {
			there = append(there, fmt.Sprintf("%s (created %s)", o, obj.CreationTimestamp.Format(time.RFC3339)))
		}
	}
	if len(there) > 0 {
		return fmt.Errorf("found in namespace %s, where the tenant has no rights: %s", ns, strings.Join(there, ", "))
	}
	return nil
}

// errBreached marks an error of a guard: the attack succeeded.
var errBreached = errors.New("the attack succeeded")

// guarded returns a check that first runs guard, whose error (the attack
// succeeded) ends the wait at once, then check. A kubectl command of the
// guard that failed (errCommand) says nothing of the attack: the wait goes
// on.
func guarded(guard, check func() error) func() error {
	return func() error {
		if err := guard(); errors.Is(err, errCommand) {
			return err
		} else if err != nil {
			return fmt.Errorf("%w: %w", errBreached, err)
		}
		return check()
	}
}

// waitGuarded calls check until it returns nil and fails t after timeout;
// an error wrapping errBreached fails t at once.
func waitGuarded(t *testing.T, timeout time.Duration, what string, check func() error) {
	t.Helper()
	if err := within(timeout, check); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
	t.Logf("%s: seen", what)
}

// within calls check every pollInterval until it returns nil (nil), returns
// an error wrapping errBreached (that error), or timeout passes (check's
// last error).
func within(timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		switch {
		case err == nil:
			return nil
		case errors.Is(err, errBreached):
			return err
		case time.Now().After(deadline):
			return fmt.Errorf("not within %s: %w", timeout, err)
		}
		time.Sleep(pollInterval)
	}
}

// holds checks guard every pollInterval for d and fails t at its first
// error other than a failed kubectl command (logged).
func holds(t *testing.T, d time.Duration, what string, guard func() error) {
	t.Helper()
	for deadline := time.Now().Add(d); ; {
		if err := guard(); errors.Is(err, errCommand) {
			t.Logf("%s: %v", what, err)
		} else if err != nil {
			t.Fatalf("%s: %v: %v", what, errBreached, err)
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(pollInterval)
	}
}

// tenantResource is the part of any of rudder's kinds the tenancy tests read.
type tenantResource struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Status   struct {
		ActingAs   string             `json:"actingAs"`
		Conditions []metav1.Condition `json:"conditions"`
	} `json:"status"`
}

// getResource reads kind ns/name.
func getResource(kind, ns, name string) (*tenantResource, error) {
	var r tenantResource
	found, err := getJSON(&r, kind, name, "-n", ns)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("expected %s %s/%s, saw NotFound", kind, ns, name)
	}
	return &r, nil
}

// conditionIs says how kind ns/name's condition typ differs from status
// (any when empty) with one of reasons and a message holding each of notes.
func conditionIs(kind, ns, name, typ string, status metav1.ConditionStatus, reasons []string, notes ...string) error {
	r, err := getResource(kind, ns, name)
	if err != nil {
		return err
	}
	c := condition(r.Status.Conditions, typ)
	if c == nil {
		return fmt.Errorf("%s %s/%s: expected condition %s %s (%s), saw none; conditions %s",
			kind, ns, name, typ, status, strings.Join(reasons, " or "), toJSON(r.Status.Conditions))
	}
	reasonOK := false
	for _, want := range reasons {
		reasonOK = reasonOK || c.Reason == want
	}
	if (status != "" && c.Status != status) || !reasonOK {
		return fmt.Errorf("%s %s/%s: expected condition %s %s (%s), saw %s (%s: %s)",
			kind, ns, name, typ, status, strings.Join(reasons, " or "), c.Status, c.Reason, c.Message)
	}
	for _, n := range notes {
		if !strings.Contains(c.Message, n) {
			return fmt.Errorf("%s %s/%s: expected condition %s's message to mention %q, saw %q", kind, ns, name, typ, n, c.Message)
		}
	}
	return nil
}

// checkActingAs fails t unless kind ns/name says in status.actingAs that
// rudder acted as want.
func checkActingAs(t *testing.T, kind, ns, name, want string) {
	t.Helper()
	r, err := getResource(kind, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status.ActingAs != want {
		t.Errorf("%s %s/%s: status.actingAs %q, want %q", kind, ns, name, r.Status.ActingAs, want)
	}
}

// eventsAbout returns the events about the object of uid in ns.
func eventsAbout(ns, uid string) ([]corev1.Event, error) {
	var list corev1.EventList
	if _, err := getJSON(&list, "events", "-n", ns, "--field-selector", "involvedObject.uid="+uid); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// occurrences counts the times the events happened: an event repeated
// carries its count.
func occurrences(evs []corev1.Event, is func(corev1.Event) bool) int {
	n := 0
	for _, e := range evs {
		if !is(e) {
			continue
		}
		c := max(int(e.Count), 1)
		if e.Series != nil {
			c = max(c, int(e.Series.Count))
		}
		n += c
	}
	return n
}

// residentMemory reads VmRSS, in bytes, of process pid.
func residentMemory(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/status: VmRSS %q: %w", pid, v, err)
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("/proc/%d/status has no VmRSS line", pid)
}

// mib renders bytes in MiB.
func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// gzipped is b gzipped, as Helm's storage compresses a release.
func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
