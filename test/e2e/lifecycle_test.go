//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Helpers of the lifecycle tests (issue 5): one WebApp in one namespace,
// read through kubectl and helm as a user would.

// helmRevision is one row of `helm history -o json`.
type helmRevision struct {
	Revision    int    `json:"revision"`
	Status      string `json:"status"`
	Chart       string `json:"chart"`
	AppVersion  string `json:"app_version"`
	Description string `json:"description"`
}

// lcApp is one WebApp of a lifecycle test.
type lcApp struct {
	t        *testing.T
	ns, name string
	cli      string // the helm CLI that reads its release: helm (Helm 4) unless set, or helm3
}

// newApp returns WebApp name in namespace ns. In the default namespace it
// also removes what an earlier run left of it, now and when the test ends
// (startClean); other namespaces are the test's own to delete.
func newApp(t *testing.T, ns, name string) *lcApp {
	t.Helper()
	if ns == namespace {
		startClean(t, name)
	}
	return &lcApp{t: t, ns: ns, name: name, cli: "helm"}
}

func (a *lcApp) release() string { return releaseName(a.name) }

// create applies the WebApp with spec.
func (a *lcApp) create(spec map[string]any) {
	a.t.Helper()
	obj := map[string]any{
		"apiVersion": "webapp.my.domain/v1",
		"kind":       "WebApp",
		"metadata":   map[string]any{"name": a.name, "namespace": a.ns},
		"spec":       spec,
	}
	b, err := json.Marshal(obj)
	if err != nil {
		a.t.Fatal(err)
	}
	apply(a.t, string(b))
}

// patch merges patch (JSON) into the WebApp.
func (a *lcApp) patch(patch string) {
	a.t.Helper()
	kubectl(a.t, "patch", "webapp", a.name, "-n", a.ns, "--type", "merge", "-p", patch)
}

// annotate sets (key=value) or removes (key-) an annotation of the WebApp.
func (a *lcApp) annotate(arg string) {
	a.t.Helper()
	kubectl(a.t, "annotate", "webapp", a.name, "-n", a.ns, "--overwrite", arg)
}

func (a *lcApp) get() (*webApp, error) {
	var wa webApp
	found, err := getJSON(&wa, "webapp", a.name, "-n", a.ns)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("expected WebApp %s/%s to exist, saw NotFound", a.ns, a.name)
	}
	return &wa, nil
}

func (a *lcApp) mustGet() *webApp {
	a.t.Helper()
	wa, err := a.get()
	if err != nil {
		a.t.Fatal(err)
	}
	return wa
}

// history returns `helm history` of the WebApp's release, oldest first.
func (a *lcApp) history() ([]helmRevision, error) {
	out, err := run(a.cli, "history", a.release(), "-n", a.ns, "--max", "100", "-o", "json")
	if err != nil {
		return nil, err
	}
	var revs []helmRevision
	if err := json.Unmarshal([]byte(out), &revs); err != nil {
		return nil, fmt.Errorf("decoding helm history %s: %w", a.release(), err)
	}
	return revs, nil
}

func (a *lcApp) mustHistory() []helmRevision {
	a.t.Helper()
	revs, err := a.history()
	if err != nil {
		a.t.Fatal(err)
	}
	return revs
}

// values returns `helm get values` of the release's deployed revision.
func (a *lcApp) values() (map[string]any, error) {
	out, err := run(a.cli, "get", "values", a.release(), "-n", a.ns, "-o", "json")
	if err != nil {
		return nil, err
	}
	var vals map[string]any
	if err := json.Unmarshal([]byte(out), &vals); err != nil {
		return nil, fmt.Errorf("decoding helm get values %s: %w", a.release(), err)
	}
	return vals, nil
}

// deployment reads the WebApp's Deployment.
func (a *lcApp) deployment() (*appsv1.Deployment, error) {
	var d appsv1.Deployment
	found, err := getJSON(&d, "deployment", a.name, "-n", a.ns)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("expected Deployment %s/%s, saw NotFound", a.ns, a.name)
	}
	return &d, nil
}

// serving says how the WebApp differs from serving image with replicas ready
// replicas at release revision rev (0: any), with Released and Ready True:
// in its status, its release values and its Deployment.
func (a *lcApp) serving(rev int, image string, replicas int32) (*webApp, error) {
	wa, err := a.get()
	if err != nil {
		return nil, err
	}
	w := want{replicas: replicas, revision: rev}
	if rev == 0 && wa.Status.Release != nil {
		w.revision = wa.Status.Release.Revision
	}
	if err := checkRunning(wa, a.name, w); err != nil {
		return nil, fmt.Errorf("WebApp %s/%s: %w; whole status: %s", a.ns, a.name, err, toJSON(wa.Status))
	}
	vals, err := a.values()
	if err != nil {
		return nil, err
	}
	if vals["image"] != image || vals["replicas"] != float64(replicas) {
		return nil, fmt.Errorf("helm get values %s: expected image %s and replicas %d, saw %s", a.release(), image, replicas, toJSON(vals))
	}
	d, err := a.deployment()
	if err != nil {
		return nil, err
	}
	if got := d.Spec.Template.Spec.Containers[0].Image; got != image || d.Status.ReadyReplicas != replicas || d.Status.UpdatedReplicas != replicas {
		return nil, fmt.Errorf("Deployment %s/%s: expected %d ready and updated replicas of %s, saw %d ready, %d updated of %s",
			a.ns, a.name, replicas, image, d.Status.ReadyReplicas, d.Status.UpdatedReplicas, got)
	}
	return wa, nil
}

// waitServing waits until the WebApp serves image with replicas ready
// replicas at revision rev (0: any) and returns it as seen then.
func (a *lcApp) waitServing(rev int, image string, replicas int32) *webApp {
	a.t.Helper()
	var wa *webApp
	eventually(a.t, fmt.Sprintf("WebApp %s/%s serving %s with %d ready replicas at revision %d", a.ns, a.name, image, replicas, rev),
		func() error {
			var err error
			wa, err = a.serving(rev, image, replicas)
			return err
		})
	return wa
}

// waitCondition waits until the WebApp's condition typ has status and reason
// and a message containing each of notes; it returns the condition.
func (a *lcApp) waitCondition(typ string, status metav1.ConditionStatus, reason string, notes ...string) metav1.Condition {
	a.t.Helper()
	var got metav1.Condition
	eventually(a.t, fmt.Sprintf("condition %s %s (%s) on WebApp %s/%s", typ, status, reason, a.ns, a.name), func() error {
		wa, err := a.get()
		if err != nil {
			return err
		}
		return checkCondition(wa, typ, status, reason, notes...)
	})
	wa := a.mustGet()
	if c := condition(wa.Status.Conditions, typ); c != nil {
		got = *c
	}
	return got
}

// checkCondition says how wa's condition typ differs from the expected one.
func checkCondition(wa *webApp, typ string, status metav1.ConditionStatus, reason string, notes ...string) error {
	c := condition(wa.Status.Conditions, typ)
	if c == nil {
		return fmt.Errorf("expected condition %s %s (%s), saw none; conditions: %s", typ, status, reason, toJSON(wa.Status.Conditions))
	}
	if c.Status != status || c.Reason != reason {
		return fmt.Errorf("expected condition %s %s (%s), saw %s (%s: %s)", typ, status, reason, c.Status, c.Reason, c.Message)
	}
	for _, n := range notes {
		if !strings.Contains(c.Message, n) {
			return fmt.Errorf("expected condition %s's message to mention %q, saw %q", typ, n, c.Message)
		}
	}
	return nil
}

// events returns the events about the WebApp (this incarnation: by uid).
func (a *lcApp) events(uid string) ([]corev1.Event, error) {
	var list corev1.EventList
	if _, err := getJSON(&list, "events", "-n", a.ns, "--field-selector", "involvedObject.uid="+uid); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// waitEvent waits for an event of reason about the WebApp whose message
// contains each of notes, and returns it.
func (a *lcApp) waitEvent(uid, reason string, notes ...string) corev1.Event {
	a.t.Helper()
	var found corev1.Event
	eventually(a.t, fmt.Sprintf("a %s event about WebApp %s/%s mentioning %q", reason, a.ns, a.name, notes), func() error {
		evs, err := a.events(uid)
		if err != nil {
			return err
		}
		var seen []string
	next:
		for _, e := range evs {
			seen = append(seen, e.Reason+": "+e.Message)
			if e.Reason != reason {
				continue
			}
			for _, n := range notes {
				if !strings.Contains(e.Message, n) {
					continue next
				}
			}
			found = e
			return nil
		}
		return fmt.Errorf("expected a %s event mentioning %q, saw %q", reason, notes, seen)
	})
	return found
}

// checkHistory checks that helm history has exactly n revisions, the newest
// deployed, and that the revisions in descriptions have a description
// starting with the given text.
func (a *lcApp) checkHistory(revs []helmRevision, n int, descriptions map[int]string) {
	a.t.Helper()
	if len(revs) != n || revs[len(revs)-1].Revision != n || revs[len(revs)-1].Status != "deployed" {
		a.t.Fatalf("helm history %s: expected revisions 1 to %d, the last deployed, saw %s", a.release(), n, toJSON(revs))
	}
	for rev, desc := range descriptions {
		if got := revs[rev-1].Description; !strings.HasPrefix(got, desc) {
			a.t.Errorf("helm history %s: expected revision %d's description to start with %q, saw %q", a.release(), rev, desc, got)
		}
	}
}

// holdsSteady checks, for d and then after a reconcile asked for at the
// end of d (the positive signal that rudder looked again), that the release
// keeps n revisions in helm history, the newest deployed one with values
// image, and that the Deployment keeps running image: rudder writes no
// revision and changes nothing.
func (a *lcApp) holdsSteady(d time.Duration, n int, image string) {
	a.t.Helper()
	deadline := time.Now().Add(d)
	for {
		if err := a.steady(n, image); err != nil {
			a.t.Fatalf("expected the release to hold for %s: %v", d, err)
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Second)
	}
	a.reconciled()
	if err := a.steady(n, image); err != nil {
		a.t.Fatalf("expected the release to hold after a reconcile: %v", err)
	}
	a.t.Logf("release %s held at %d revisions on %s for %s and a reconcile", a.release(), n, image, d)
}

// reconciled asks rudder to reconcile the WebApp now, as `rudder reconcile`
// does, and waits until its status says a reconcile saw the request.
func (a *lcApp) reconciled() {
	a.t.Helper()
	token := time.Now().UTC().Format(time.RFC3339Nano)
	a.annotate("rudder.dev/reconcile-requested-at=" + token)
	eventually(a.t, fmt.Sprintf("a reconcile of WebApp %s/%s after the request %s", a.ns, a.name, token), func() error {
		wa, err := a.get()
		if err != nil {
			return err
		}
		if wa.Status.LastHandledReconcileAt != token {
			return fmt.Errorf("status.lastHandledReconcileAt %q", wa.Status.LastHandledReconcileAt)
		}
		return nil
	})
}

// steady says how the release differs from n revisions, the newest deployed
// one serving image, with the Deployment on image.
func (a *lcApp) steady(n int, image string) error {
	revs, err := a.history()
	if err != nil {
		return err
	}
	deployed := 0
	for _, r := range revs {
		if r.Status == "deployed" {
			deployed = r.Revision
		}
	}
	if len(revs) != n || deployed == 0 {
		return fmt.Errorf("expected helm history %s to show %d revisions, one deployed, saw %s", a.release(), n, toJSON(revs))
	}
	out, err := run(a.cli, "get", "values", a.release(), "-n", a.ns, "--revision", fmt.Sprint(deployed), "-o", "json")
	if err != nil {
		return err
	}
	var vals map[string]any
	if err := json.Unmarshal([]byte(out), &vals); err != nil {
		return fmt.Errorf("decoding helm get values: %w", err)
	}
	dep, err := a.deployment()
	if err != nil {
		return err
	}
	if got := dep.Spec.Template.Spec.Containers[0].Image; vals["image"] != image || got != image {
		return fmt.Errorf("expected release %s (revision %d deployed) and its Deployment on %s, saw values %s and Deployment image %s",
			a.release(), deployed, image, toJSON(vals), got)
	}
	return nil
}

// poke changes a harmless annotation, which makes rudder reconcile the
// WebApp at once (its watch passes annotation changes).
func (a *lcApp) poke() {
	a.t.Helper()
	a.annotate(fmt.Sprintf("e2e.rudder.dev/poke=%d", time.Now().UnixNano()))
}

// sameValues checks that the release serves exactly spec as its values.
func (a *lcApp) sameValues(spec map[string]any) error {
	vals, err := a.values()
	if err != nil {
		return err
	}
	want, err := normalizeJSON(spec)
	if err != nil {
		return err
	}
	if got, _ := normalizeJSON(vals); !reflect.DeepEqual(got, want) {
		return fmt.Errorf("helm get values %s: expected the spec %s, saw %s", a.release(), toJSON(want), toJSON(vals))
	}
	return nil
}
