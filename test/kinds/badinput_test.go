package kinds_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/rudder-operator/rudder"
	"github.com/rudder-operator/rudder/internal/watches"
	"github.com/rudder-operator/rudder/test/testenv"
)

// failsAt says where a bad input is stopped, and so what a case expects.
type failsAt int

const (
	// admission: the API server refuses the create or the patch, naming the
	// field (schema and CEL rules of the CRD).
	admission failsAt = iota
	// render: Helm refuses before it stores anything (a chart template
	// `fail`, the chart's values.schema.json): no revision per try.
	render
	// apply: the API server refuses an object the chart rendered: each try
	// stores one failed revision, at most remediation.maxAttempts of them.
	apply
	// hook: one of the kind's hooks refuses the spec: no Helm action at all.
	hook
	// deployed: the spec only looks bad; it must be deployed as revision 2.
	deployed
)

// badInput is one case of TestBadInput.
type badInput struct {
	name string
	kind string // WebApp, Database or Network
	// objName is the custom resource's name; "bad" when empty.
	objName string
	// good, when set, is created first; for a case failing after admission,
	// its release revision 1 must be deployed before bad is patched over it.
	good map[string]any
	// bad is the spec created (no good) or merge-patched over good.
	bad map[string]any
	// scale, when set, is the replica count written through the scale
	// subresource (kubectl scale) instead of patching bad.
	scale *int32
	// strict asks the API server to refuse fields the schema does not know
	// (kubectl's default), instead of dropping them.
	strict bool
	// secrets are created in the case's namespace before anything else:
	// name to data.
	secrets map[string]map[string]string

	fails failsAt
	// field is the field the API server's refusal names (admission only).
	field string
	// want is the exact error text: in the API server's refusal (admission),
	// else in the Released condition's message.
	want string
	// condition is the condition of the hook that refuses (hook only): False,
	// with its part of want as its message.
	condition string
}

var (
	webApp   = map[string]any{"image": "nginx:1.25", "port": int64(8080)}
	database = map[string]any{"version": "16", "storageSize": "1Gi", "database": "app"}
	network  = map[string]any{"cidr": "10.0.0.0/24", "gateway": "10.0.0.1"}
)

// with returns a copy of spec with the fields of more set over it.
func with(spec map[string]any, more map[string]any) map[string]any {
	out := maps.Clone(spec)
	maps.Copy(out, more)
	return out
}

var badInputs = []badInput{
	// --- WebApp, refused at admission ---
	{name: "replicas zero", kind: "WebApp", bad: with(webApp, map[string]any{"replicas": int64(0)}),
		fails: admission, field: "spec.replicas", want: "spec.replicas in body should be greater than or equal to 1"},
	{name: "replicas over the maximum", kind: "WebApp", bad: with(webApp, map[string]any{"replicas": int64(101)}),
		fails: admission, field: "spec.replicas", want: "spec.replicas in body should be less than or equal to 100"},
	{name: "replicas zero through the scale subresource", kind: "WebApp", good: webApp, scale: ptr.To[int32](0),
		fails: admission, field: "spec.replicas", want: "spec.replicas in body should be greater than or equal to 1"},
	{name: "replicas a string", kind: "WebApp", good: webApp, bad: map[string]any{"replicas": "three"},
		fails: admission, field: "spec.replicas", want: "spec.replicas in body must be of type integer"},
	{name: "image with a space", kind: "WebApp", bad: with(webApp, map[string]any{"image": "nginx: 1.25"}),
		fails: admission, field: "spec.image", want: `spec.image in body should match '^\S+$'`},
	{name: "image missing", kind: "WebApp", bad: map[string]any{"port": int64(8080)},
		fails: admission, field: "spec.image", want: "Required value"},
	{name: "test image with a space", kind: "WebApp", bad: with(webApp, map[string]any{"test": map[string]any{"image": "busybox: 1.36"}}),
		fails: admission, field: "spec.test.image", want: `spec.test.image in body should match '^\S+$'`},
	{name: "port out of range", kind: "WebApp", bad: with(webApp, map[string]any{"port": int64(70000)}),
		fails: admission, field: "spec.port", want: "spec.port in body should be less than or equal to 65535"},
	{name: "unknown imagePullPolicy", kind: "WebApp", bad: with(webApp, map[string]any{"imagePullPolicy": "Sometimes"}),
		fails: admission, field: "spec.imagePullPolicy", want: `Unsupported value: "Sometimes"`},
	{name: "service type ExternalName", kind: "WebApp", bad: with(webApp, map[string]any{"service": map[string]any{"type": "ExternalName"}}),
		fails: admission, field: "spec.service.type", want: `Unsupported value: "ExternalName"`},
	{name: "cpu request not a quantity", kind: "WebApp",
		bad:   with(webApp, map[string]any{"resources": map[string]any{"requests": map[string]any{"cpu": "lots"}}}),
		fails: admission, field: "spec.resources.requests.cpu", want: `Invalid value: "lots": spec.resources.requests.cpu in body should match`},
	{name: "config value not a string", kind: "WebApp", bad: with(webApp, map[string]any{"config": map[string]any{"PORT": int64(8080)}}),
		fails: admission, field: "spec.config.PORT", want: "spec.config.PORT in body must be of type string"},
	{name: "ingress enabled without host", kind: "WebApp", bad: with(webApp, map[string]any{"ingress": map[string]any{"enabled": true}}),
		fails: admission, field: "spec.ingress.host", want: "ingress.host is required when ingress.enabled is true"},
	{name: "ingress host not a DNS name", kind: "WebApp",
		bad:   with(webApp, map[string]any{"ingress": map[string]any{"enabled": true, "host": "My_Shop.example.com"}}),
		fails: admission, field: "spec.ingress.host", want: `Invalid value: "My_Shop.example.com": spec.ingress.host in body should match`},
	{name: "ingress class and annotation differ", kind: "WebApp",
		bad: with(webApp, map[string]any{"ingress": map[string]any{"enabled": true, "host": "shop.example.com", "className": "nginx",
			"annotations": map[string]any{"kubernetes.io/ingress.class": "traefik"}}}),
		fails: admission, field: "spec.ingress.className", want: "ingress.className and the annotation kubernetes.io/ingress.class must match when both are set"},
	{name: "storage mounted on /tmp", kind: "WebApp",
		bad:   with(webApp, map[string]any{"storage": map[string]any{"enabled": true, "mountPath": "/tmp"}}),
		fails: admission, field: "spec.storage.mountPath", want: "storage.mountPath must not be /tmp: an emptyDir is mounted there"},
	{name: "unknown field under strict validation", kind: "WebApp", bad: with(webApp, map[string]any{"replica": int64(2)}), strict: true,
		fails: admission, field: "spec.replica", want: `unknown field "spec.replica"`},

	// --- WebApp, accepted, failing later ---
	{name: "cpu request above its limit", kind: "WebApp", good: webApp,
		bad:   map[string]any{"resources": map[string]any{"requests": map[string]any{"cpu": "2"}, "limits": map[string]any{"cpu": "1"}}},
		fails: apply, want: `spec.template.spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`},
	{name: "storage size zero", kind: "WebApp", good: webApp,
		bad:   map[string]any{"storage": map[string]any{"enabled": true, "size": "0"}},
		fails: apply, want: `PersistentVolumeClaim "bad" is invalid: spec.resources[storage]: Invalid value: "0": must be greater than zero`},
	{name: "ingress host an IP address", kind: "WebApp", good: webApp,
		bad:   map[string]any{"ingress": map[string]any{"enabled": true, "host": "10.0.0.1"}},
		fails: apply, want: `spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address`},
	{name: "ingress annotation key invalid", kind: "WebApp", good: webApp,
		bad:   map[string]any{"ingress": map[string]any{"enabled": true, "host": "shop.example.com", "annotations": map[string]any{"bad key!": "x"}}},
		fails: apply, want: `metadata.annotations: Invalid value: "bad key!"`},
	{name: "storage mounted on /tmp/. reaches the chart's fail", kind: "WebApp", good: webApp,
		bad:   map[string]any{"storage": map[string]any{"enabled": true, "mountPath": "/tmp/."}},
		fails: render, want: "webapp: storage.mountPath must not be /tmp: an emptyDir is mounted there"},
	{name: "name not a Service name reaches the chart's fail", kind: "WebApp", objName: "shop.v2", bad: webApp,
		fails: render, want: `webapp: name "shop.v2" (from release "webapp-shop.v2") is not a valid Service name`},
	{name: "created with a cpu request above its limit", kind: "WebApp",
		bad:   with(webApp, map[string]any{"resources": map[string]any{"requests": map[string]any{"cpu": "2"}, "limits": map[string]any{"cpu": "1"}}}),
		fails: apply, want: `spec.template.spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`},
	{name: "env name with =", kind: "WebApp", good: webApp, bad: map[string]any{"config": map[string]any{"A=B": "x"}},
		fails: apply, want: `spec.template.spec.containers[0].env[0].name: Invalid value: "A=B"`},
	{name: "nodeSelector key invalid", kind: "WebApp", good: webApp, bad: map[string]any{"nodeSelector": map[string]any{"bad key!": "x"}},
		fails: apply, want: `spec.template.spec.nodeSelector: Invalid value: "bad key!"`},
	{name: "privileged against the default allowPrivilegeEscalation", kind: "WebApp", good: webApp,
		bad:   map[string]any{"securityContext": map[string]any{"privileged": true}},
		fails: apply, want: "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"},
	{name: "podSecurityContext runAsGroup of the wrong type", kind: "WebApp", good: webApp,
		bad:   map[string]any{"podSecurityContext": map[string]any{"runAsGroup": "staff"}},
		fails: apply, want: ".spec.template.spec.securityContext.runAsGroup: expected numeric (int or float), got string"},
	{name: "affinity of the wrong type", kind: "WebApp", good: webApp,
		bad:   map[string]any{"affinity": map[string]any{"nodeAffinity": "everywhere"}},
		fails: apply, want: ".spec.template.spec.affinity.nodeAffinity: expected map, got"},
	{name: "toleration operator unknown", kind: "WebApp", good: webApp,
		bad:   map[string]any{"tolerations": []any{map[string]any{"key": "gpu", "operator": "Sometimes"}}},
		fails: apply, want: `spec.template.spec.tolerations[0].operator: Unsupported value: "Sometimes"`},
	{name: "readiness probe with two handlers", kind: "WebApp", good: webApp,
		bad: map[string]any{"probes": map[string]any{"readiness": map[string]any{
			"httpGet": map[string]any{"path": "/", "port": "http"}, "tcpSocket": map[string]any{"port": "http"}}}},
		fails: apply, want: "spec.template.spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type"},

	// --- Database, refused at admission ---
	{name: "replicas two", kind: "Database", bad: with(database, map[string]any{"replicas": int64(2)}),
		fails: admission, field: "spec.replicas", want: "spec.replicas must be 1"},
	{name: "version before 10", kind: "Database", bad: with(database, map[string]any{"version": "9.6"}),
		fails: admission, field: "spec.version", want: "spec.version must be a PostgreSQL major version of 10 or later"},
	{name: "storageSize zero", kind: "Database", bad: with(database, map[string]any{"storageSize": "0"}),
		fails: admission, field: "spec.storageSize", want: "spec.storageSize must be a positive Kubernetes quantity"},
	{name: "database template0", kind: "Database", bad: with(database, map[string]any{"database": "template0"}),
		fails: admission, field: "spec.database", want: "spec.database must be a PostgreSQL name needing no quotes"},
	{name: "backup schedule not cron", kind: "Database",
		bad:   with(database, map[string]any{"backup": map[string]any{"enabled": true, "schedule": "every night"}}),
		fails: admission, field: "spec.backup.schedule", want: "spec.backup.schedule must be a cron expression of five fields"},
	{name: "backup retention zero", kind: "Database",
		bad:   with(database, map[string]any{"backup": map[string]any{"enabled": true, "retention": int64(0)}}),
		fails: admission, field: "spec.backup.retention", want: "spec.backup.retention in body should be greater than or equal to 1"},
	{name: "name longer than 44", kind: "Database", objName: strings.Repeat("d", 45), bad: database,
		fails: admission, field: "metadata.name", want: "metadata.name of a Database must be at most 44 characters"},
	{name: "restore from itself", kind: "Database", bad: with(database, map[string]any{"restore": map[string]any{"from": "bad"}}),
		fails: admission, field: "spec.restore.from", want: "spec.restore.from must name another Database, not this one"},
	{name: "major version change", kind: "Database", good: database, bad: map[string]any{"version": "17"},
		fails: admission, field: "spec.version", want: "spec.version cannot change its major version from 16 to 17"},
	{name: "storageSize shrinks", kind: "Database", good: with(database, map[string]any{"storageSize": "2Gi"}), bad: map[string]any{"storageSize": "1Gi"},
		fails: admission, field: "spec.storageSize", want: "spec.storageSize cannot shrink from 2Gi to 1Gi"},
	{name: "storageClass changes", kind: "Database", good: database, bad: map[string]any{"storageClass": "fast"},
		fails: admission, field: "spec.storageClass", want: "spec.storageClass cannot change once the Database exists"},
	{name: "database renamed", kind: "Database", good: database, bad: map[string]any{"database": "orders"},
		fails: admission, field: "spec.database", want: "spec.database cannot change once the Database exists"},
	{name: "restore added later", kind: "Database", good: database, bad: map[string]any{"restore": map[string]any{"from": "other"}},
		fails: admission, field: "spec.restore", want: "spec.restore cannot be added, changed or removed once the Database exists"},

	// --- Database, accepted, failing later ---
	{name: "memory request above its limit", kind: "Database", good: database,
		bad:   map[string]any{"resources": map[string]any{"requests": map[string]any{"memory": "2Gi"}, "limits": map[string]any{"memory": "1Gi"}}},
		fails: apply, want: `spec.template.spec.containers[0].resources.requests: Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi`},
	// The CRD accepts any positive quantity (CEL isQuantity), "+2Gi" too; the
	// chart's values.schema.json used to refuse the sign, so the upgrade
	// failed on a spec the API server had accepted. Fixed in the chart.
	{name: "storageSize with a plus sign", kind: "Database", good: database, bad: map[string]any{"storageSize": "+2Gi"},
		fails: deployed},
	{name: "backup storageSize with a plus sign", kind: "Database", good: database,
		bad:   map[string]any{"backup": map[string]any{"enabled": true, "storageSize": "+2Gi"}},
		fails: deployed},
	{name: "credentials Secret without the password key", kind: "Database", good: database,
		secrets: map[string]map[string]string{"provided": {"username": "app"}},
		bad:     map[string]any{"credentials": map[string]any{"secretName": "provided"}},
		fails:   hook, condition: "CredentialsReady",
		want: `hook password: credentials Secret "provided" has no key "password": add it, or set spec.credentials to the keys it has`},
	{name: "usernameKey the generated Secret lacks", kind: "Database", good: database,
		bad:   map[string]any{"credentials": map[string]any{"usernameKey": "login"}},
		fails: hook, condition: "CredentialsReady",
		want: `hook password: credentials Secret "bad-credentials" has no key "login": add it, or set spec.credentials to the keys it has`},

	// --- Network, refused at admission ---
	{name: "cidr prefix too long", kind: "Network", bad: with(network, map[string]any{"cidr": "10.0.0.0/33"}),
		fails: admission, field: "spec.cidr", want: "spec.cidr must be an IPv4 or IPv6 CIDR"},
	{name: "gateway outside the cidr", kind: "Network", bad: with(network, map[string]any{"gateway": "10.0.1.1"}),
		fails: admission, field: "spec.gateway", want: "spec.gateway must be an address inside spec.cidr"},
	{name: "gateway moved outside the cidr", kind: "Network", good: network, bad: map[string]any{"gateway": "192.168.0.1"},
		fails: admission, field: "spec.gateway", want: "spec.gateway must be an address inside spec.cidr"},
	{name: "cidr moved to the other family", kind: "Network", good: network, bad: map[string]any{"cidr": "fd00::/64"},
		fails: admission, field: "spec.gateway", want: "spec.gateway must be an address inside spec.cidr"},
	{name: "gateway with a zone", kind: "Network", bad: with(network, map[string]any{"cidr": "fe80::/64", "gateway": "fe80::1%eth0"}),
		fails: admission, field: "spec.gateway", want: "spec.gateway must be an IPv4 or IPv6 address"},
	{name: "cidr too long", kind: "Network", bad: with(network, map[string]any{"cidr": strings.Repeat("0", 60) + "10.0.0.0/24"}),
		fails: admission, field: "spec.cidr", want: "Too long: may not be more than 64 bytes"},
	{name: "cidr prefix with a leading zero", kind: "Network", bad: with(network, map[string]any{"cidr": "10.0.0.0/024"}),
		fails: admission, field: "spec.cidr", want: "spec.cidr must be an IPv4 or IPv6 CIDR"},
	{name: "cidr IPv4-mapped IPv6", kind: "Network", bad: with(network, map[string]any{"cidr": "::ffff:10.0.0.0/120", "gateway": "::ffff:10.0.0.1"}),
		fails: admission, field: "spec.cidr", want: "spec.cidr must be an IPv4 or IPv6 CIDR"},
	{name: "unknown field under strict validation", kind: "Network", bad: with(network, map[string]any{"mtu": int64(1500)}), strict: true,
		fails: admission, field: "spec.mtu", want: `unknown field "spec.mtu"`},
}

// TestBadInput feeds each kind invalid specs. Those the CRD can judge are
// refused at admission with an error naming the field. Those it cannot fail
// later: the Released condition holds the exact error, the previous revision
// stays deployed, rudder tries no more than the kind's
// remediation.maxAttempts, on the backoff its message announces, and stores
// no more failed revisions than that. No reconcile panics meanwhile.
//
// The cases run in parallel, each in a namespace of its own, in two rounds:
// up to the first failure, then (once every case has got there, so that
// their backoffs overlap) the rest of the retries.
func TestBadInput(t *testing.T) {
	ws, err := watches.Load(rudder.Files, rudder.WatchesFile)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]watches.Watch{}
	for _, w := range ws {
		kinds[w.GVK.Kind] = w
	}
	names := map[string]bool{}
	for _, tc := range badInputs {
		if _, ok := kinds[tc.kind]; !ok {
			t.Fatalf("case %q: no kind %s in watches.yaml", tc.name, tc.kind)
		}
		if names[tc.testName()] {
			t.Fatalf("case %q twice", tc.testName())
		}
		names[tc.testName()] = true
	}
	// The manager starts its controllers with the tests: wait for their series.
	var panicsBefore float64
	testenv.Eventually(t, "reconcile panic counters", func() (err error) {
		panicsBefore, err = reconcilePanics(ws)
		return err
	})

	retry := make([]*badRun, len(badInputs)) // what the second round checks
	t.Run("cases", func(t *testing.T) {
		for i, tc := range badInputs {
			t.Run(tc.testName(), func(t *testing.T) {
				t.Parallel()
				retry[i] = tc.firstFailure(t, kinds[tc.kind])
			})
		}
	})
	t.Run("retries", func(t *testing.T) {
		for i, tc := range badInputs {
			if retry[i] == nil {
				continue // done in the first round, or failed there
			}
			t.Run(tc.testName(), func(t *testing.T) {
				t.Parallel()
				tc.retries(t, retry[i])
			})
		}
	})

	panics, err := reconcilePanics(ws)
	switch {
	case err != nil:
		t.Error(err)
	case panics != panicsBefore:
		t.Errorf("controller_runtime_reconcile_panics_total rose by %v during the cases, want 0", panics-panicsBefore)
	}
}

func (tc badInput) testName() string { return tc.kind + "/" + tc.name }

// badRun is a case past its first failure, for the second round.
type badRun struct {
	w          watches.Watch
	ns, name   string
	generation int64
}

// firstFailure runs a case up to the first failure and checks it; it
// returns what the second round needs when the case has retries to follow.
func (tc badInput) firstFailure(t *testing.T, w watches.Watch) *badRun {
	ns := namespace(t)
	name := tc.objName
	if name == "" {
		name = "bad"
	}
	for s, data := range tc.secrets {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: s}, StringData: data}
		if err := k8s.Create(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
	release := w.ReleaseName(name)
	obj := testenv.NewObject(w.GVK, ns, name, nil)

	var err error
	if tc.good == nil {
		obj.Object["spec"] = tc.bad
		err = k8s.Create(ctx, obj, tc.options()...)
	} else {
		obj.Object["spec"] = tc.good
		if err := k8s.Create(ctx, obj); err != nil {
			t.Fatalf("create the good spec: %v", err)
		}
		if tc.fails != admission {
			testenv.Eventually(t, "good spec released", func() error {
				if err := revisionsAre(ns, release, "1:deployed"); err != nil {
					return err
				}
				return releasedIs(w, ns, name, 1, metav1.ConditionTrue, "InstallSucceeded", "Revision 1 is deployed")
			})
		}
		err = tc.change(w, ns, name)
	}

	if tc.fails == admission {
		tc.checkRefused(t, err)
		return nil
	}
	if err != nil {
		t.Fatalf("the API server refused the spec, want it accepted: %v", err)
	}
	run := &badRun{w: w, ns: ns, name: name, generation: obj.GetGeneration()}
	if tc.good != nil {
		run.generation = 2
	}
	if tc.fails == deployed {
		testenv.Eventually(t, "revision 2 deployed", func() error {
			if err := revisionsAre(ns, release, "1:superseded", "2:deployed"); err != nil {
				return err
			}
			return releasedIs(w, ns, name, run.generation, metav1.ConditionTrue, "UpgradeSucceeded", "Revision 2 is deployed")
		})
		return nil
	}

	reason := "UpgradeFailed"
	switch {
	case tc.fails == hook:
		reason = "HookFailed"
	case tc.good == nil:
		reason = "InstallFailed"
	}
	testenv.Eventually(t, "Released False after the first failure", func() error {
		return releasedIs(w, ns, name, run.generation, metav1.ConditionFalse, reason, tc.want)
	})
	if err := revisionsWithin(ns, release, tc.serving(), w.Remediation.MaxAttempts); err != nil {
		t.Error(err)
	}
	if tc.fails != hook {
		return run
	}
	// No Helm action while a hook refuses; the hook's condition says why.
	testenv.Eventually(t, tc.condition+" False", func() error {
		return hookConditionFalse(w, ns, name, tc.condition, tc.want)
	})
	if err := revisionsAre(ns, release, tc.serving()...); err != nil {
		t.Error(err)
	}
	return nil
}

// retries follows a case's retries to the hold: every try the kind allows
// made on the announced backoff, no more failed revisions than one per try
// the API server refused, the serving revision still deployed.
func (tc badInput) retries(t *testing.T, run *badRun) {
	limit := run.w.Remediation.MaxAttempts
	testenv.EventuallyWithin(t, 3*time.Minute, "retries exhausted", func() error {
		return releasedIs(run.w, run.ns, run.name, run.generation, metav1.ConditionFalse, "RetriesExhausted",
			fmt.Sprintf("Gave up after %d failed tries", limit), tc.want)
	})
	if err := revisionsAre(run.ns, run.w.ReleaseName(run.name), tc.finalRevisions(limit)...); err != nil {
		t.Error(err)
	}
	if err := retriedOnTime(run, limit); err != nil {
		t.Error(err)
	}
}

// serving is what a failing case keeps deployed: revision 1 of the good
// spec, or nothing when the bad spec was the first.
func (tc badInput) serving() []string {
	if tc.good == nil {
		return nil
	}
	return []string{"1:deployed"}
}

// finalRevisions is what Helm stores once tries stop. A render error stores
// nothing; each upgrade the API server refused stores a failed revision; a
// failed install is uninstalled before the next try, so one failed revision.
func (tc badInput) finalRevisions(limit int) []string {
	out := tc.serving()
	switch {
	case tc.fails != apply:
	case tc.good == nil:
		out = append(out, "1:failed")
	default:
		for i := range limit {
			out = append(out, fmt.Sprintf("%d:failed", i+2))
		}
	}
	return out
}

func (tc badInput) options() []client.CreateOption {
	if tc.strict {
		return []client.CreateOption{client.FieldValidation("Strict")}
	}
	return nil
}

// change writes the bad spec over the good one: a merge patch of bad, or an
// update of the scale subresource.
func (tc badInput) change(w watches.Watch, ns, name string) error {
	obj := testenv.NewObject(w.GVK, ns, name, nil)
	if tc.scale != nil {
		scale := &unstructured.Unstructured{}
		scale.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
		if err := k8s.SubResource("scale").Get(ctx, obj, scale); err != nil {
			return err
		}
		if err := unstructured.SetNestedField(scale.Object, int64(*tc.scale), "spec", "replicas"); err != nil {
			return err
		}
		scale.SetResourceVersion("") // as kubectl scale: whatever rudder wrote meanwhile
		return k8s.SubResource("scale").Update(ctx, obj, client.WithSubResourceBody(scale))
	}
	body, err := json.Marshal(map[string]any{"spec": tc.bad})
	if err != nil {
		return err
	}
	var opts []client.PatchOption
	if tc.strict {
		opts = append(opts, client.FieldValidation("Strict"))
	}
	return k8s.Patch(ctx, obj, client.RawPatch(types.MergePatchType, body), opts...)
}

// checkRefused checks an admission refusal: Invalid, with a cause naming
// the field and saying want; or, for a field the schema does not know under
// strict validation, BadRequest saying want, which names the field.
func (tc badInput) checkRefused(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("the API server accepted the spec, want it refused naming %s", tc.field)
	}
	t.Logf("API server: %v", err)
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Fatalf("refusal %v is no API status", err)
	}
	st := status.Status()
	switch {
	case tc.strict && st.Reason == metav1.StatusReasonBadRequest:
		if !strings.Contains(st.Message, tc.want) || !strings.Contains(tc.want, tc.field) {
			t.Errorf("refusal %q does not say %q", st.Message, tc.want)
		}
	case st.Reason != metav1.StatusReasonInvalid || st.Details == nil:
		t.Errorf("refusal %v is %s, want Invalid naming %s", err, st.Reason, tc.field)
	default:
		if !slices.ContainsFunc(st.Details.Causes, func(c metav1.StatusCause) bool {
			return c.Field == tc.field && strings.Contains(c.Message, tc.want)
		}) {
			t.Errorf("refusal has no cause for field %s saying %q: %+v", tc.field, tc.want, st.Details.Causes)
		}
	}
	// One message per mistake: a guarded rule must not add a CEL runtime error.
	if strings.Contains(err.Error(), "evaluation error") || strings.Contains(err.Error(), "no such key") {
		t.Errorf("refusal %q holds a CEL evaluation error", err)
	}
}

// releasedIs checks the Released condition: status, reason, that it was set
// from the given generation, and that its message holds each of parts.
func releasedIs(w watches.Watch, ns, name string, generation int64, status metav1.ConditionStatus, reason string, parts ...string) error {
	u := testenv.NewObject(w.GVK, ns, name, nil)
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
		return err
	}
	c := testenv.Condition(u, "Released")
	switch {
	case c == nil:
		return fmt.Errorf("no Released condition (status: %v)", u.Object["status"])
	case c.ObservedGeneration != generation:
		return fmt.Errorf("Released is from generation %d, want %d: %s/%s %q", c.ObservedGeneration, generation, c.Status, c.Reason, c.Message)
	case c.Status != status || c.Reason != reason:
		return fmt.Errorf("Released = %s/%s (%q), want %s/%s", c.Status, c.Reason, c.Message, status, reason)
	}
	for _, p := range parts {
		if !strings.Contains(c.Message, p) {
			return fmt.Errorf("Released message %q does not contain %q", c.Message, p)
		}
	}
	return nil
}

// hookConditionFalse checks that the hook's condition typ is False
// (HookFailed) with a message that want, the Released message, ends with.
func hookConditionFalse(w watches.Watch, ns, name, typ, want string) error {
	u := testenv.NewObject(w.GVK, ns, name, nil)
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
		return err
	}
	c := testenv.Condition(u, typ)
	switch {
	case c == nil:
		return fmt.Errorf("no %s condition (status: %v)", typ, u.Object["status"])
	case c.Status != metav1.ConditionFalse || c.Reason != "HookFailed":
		return fmt.Errorf("%s = %s/%s (%q), want False/HookFailed", typ, c.Status, c.Reason, c.Message)
	case c.Message == "" || !strings.HasSuffix(want, c.Message):
		return fmt.Errorf("%s message %q is not the end of %q", typ, c.Message, want)
	}
	return nil
}

// revisionsWithin checks the revisions of a release while tries go on: the
// deployed ones are exactly deployed, and the others are failed ones, at most
// limit of them.
func revisionsWithin(ns, release string, deployed []string, limit int) error {
	got, err := testenv.Revisions(ctx, k8s, ns, release)
	if err != nil {
		return err
	}
	var serving []string
	failed := 0
	for _, r := range got {
		switch {
		case strings.HasSuffix(r, ":failed"):
			failed++
		default:
			serving = append(serving, r)
		}
	}
	if !slices.Equal(serving, deployed) || failed > limit {
		return fmt.Errorf("release %s has revisions %v, want %v and at most %d failed", release, got, deployed, limit)
	}
	return nil
}

// retriedOnTime checks status.failures, the tries rudder counted: limit of
// them, the last one no later after the first than the backoff the Released
// message announces (10s, 20s, 40s, ...; internal/reconcile), give or take
// retrySlack. The Released condition turned False at the first failure and
// stayed False since, so its lastTransitionTime dates the first try.
func retriedOnTime(run *badRun, limit int) error {
	u := testenv.NewObject(run.w.GVK, run.ns, run.name, nil)
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
		return err
	}
	count, _, _ := unstructured.NestedInt64(u.Object, "status", "failures", "count")
	lastText, _, _ := unstructured.NestedString(u.Object, "status", "failures", "last")
	last, err := time.Parse(time.RFC3339, lastText)
	if count != int64(limit) || err != nil {
		failures, _, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "failures")
		return fmt.Errorf("status.failures = %v, want count %d and the time of the last try", failures, limit)
	}
	first := testenv.Condition(u, "Released").LastTransitionTime.Time
	var backoff time.Duration
	for i := range limit - 1 {
		backoff += 10 * time.Second << i
	}
	if took := last.Sub(first); took > backoff+retrySlack {
		return fmt.Errorf("%d tries took %s from the first to the last, want about %s (backoff 10s, 20s, ...)", limit, took, backoff)
	}
	return nil
}

// retrySlack is how late a retry may come on a slow, shared machine.
const retrySlack = 20 * time.Second

// reconcilePanics sums controller_runtime_reconcile_panics_total over every
// controller of the manager under test, gathered in-process. It fails when a
// kind's controller has no series: the sum would then prove nothing.
func reconcilePanics(ws []watches.Watch) (float64, error) {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return 0, err
	}
	sum, seen := 0.0, map[string]bool{}
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_panics_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			sum += m.GetCounter().GetValue()
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" {
					seen[l.GetValue()] = true
				}
			}
		}
	}
	for _, w := range ws {
		if !seen[w.GVK.Kind] {
			return 0, fmt.Errorf("controller_runtime_reconcile_panics_total has no series for controller %s (has %v)", w.GVK.Kind, seen)
		}
	}
	return sum, nil
}
