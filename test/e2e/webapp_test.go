//go:build e2e

package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// What rudder promises about a WebApp, in the words of its status.
const (
	phaseRunning    = "Running"
	messageAllReady = "All replicas are ready"
	finalizer       = "rudder.dev/release"
	namespace       = "default"
)

// webApp is the part of a WebApp custom resource the tests read.
type webApp struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     map[string]any    `json:"spec"`
	Status   webAppStatus      `json:"status"`
}

type webAppStatus struct {
	ObservedGeneration int64              `json:"observedGeneration"`
	Phase              string             `json:"phase"`
	Message            string             `json:"message"`
	Replicas           int32              `json:"replicas"`
	ReadyReplicas      int32              `json:"readyReplicas"`
	Release            *releaseStatus     `json:"release"`
	Conditions         []metav1.Condition `json:"conditions"`
	// LastHandledReconcileAt echoes rudder.dev/reconcile-requested-at.
	LastHandledReconcileAt string `json:"lastHandledReconcileAt"`
	// LastHandledTestAt echoes rudder.dev/test-requested-at once its tests ran.
	LastHandledTestAt string         `json:"lastHandledTestAt"`
	History           []historyEntry `json:"history"`
}

// historyEntry is one revision in status.history.
type historyEntry struct {
	Revision int    `json:"revision"`
	Status   string `json:"status"`
	Test     *struct {
		Result    string       `json:"result"`
		Completed *metav1.Time `json:"completed"`
	} `json:"test"`
}

type releaseStatus struct {
	Name         string `json:"name"`
	Revision     int    `json:"revision"`
	Chart        string `json:"chart"`
	ChartVersion string `json:"chartVersion"`
	AppVersion   string `json:"appVersion"`
	Status       string `json:"status"`
}

// helmListEntry is one row of `helm list -o json`.
type helmListEntry struct {
	Name       string `json:"name"`
	Namespace  string `json:"namespace"`
	Revision   string `json:"revision"`
	Status     string `json:"status"`
	Chart      string `json:"chart"`
	AppVersion string `json:"app_version"`
}

// releaseName is the Helm release rudder makes for the WebApp name.
func releaseName(name string) string { return "webapp-" + name }

func condition(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// want is the converged state of a WebApp: every replica ready at a revision.
type want struct {
	replicas int32
	revision int
}

// waitRunning waits until WebApp name reports, for its current generation,
// phase Running with w.replicas ready replicas at release revision
// w.revision, with Released and Ready True; it returns the WebApp as seen then.
func waitRunning(t *testing.T, name string, w want) *webApp {
	t.Helper()
	var wa *webApp
	eventually(t, fmt.Sprintf("WebApp %s Running with %d/%d ready replicas at revision %d", name, w.replicas, w.replicas, w.revision),
		func() error {
			var got webApp
			found, err := getJSON(&got, "webapp", name, "-n", namespace)
			if err != nil {
				return err
			}
			if !found {
				return errors.New("expected the WebApp to exist, saw NotFound")
			}
			if err := checkRunning(&got, name, w); err != nil {
				return fmt.Errorf("%w; whole status: %s", err, toJSON(got.Status))
			}
			wa = &got
			return nil
		})
	return wa
}

// checkRunning says how wa differs from the converged state w.
func checkRunning(wa *webApp, name string, w want) error {
	gen, st := wa.Metadata.Generation, wa.Status
	switch {
	case st.ObservedGeneration != gen:
		return fmt.Errorf("expected status.observedGeneration %d (metadata.generation), saw %d", gen, st.ObservedGeneration)
	case st.Phase != phaseRunning:
		err := fmt.Errorf("expected phase %s, saw %q (message %q)", phaseRunning, st.Phase, st.Message)
		if conditionsTrueAt(st.Conditions, gen) {
			err = fmt.Errorf("%w; inconsistent: Released and Ready are True at this generation", err)
		}
		return err
	case st.Message != messageAllReady:
		return fmt.Errorf("expected message %q, saw %q", messageAllReady, st.Message)
	case st.ReadyReplicas != w.replicas || st.Replicas != w.replicas:
		return fmt.Errorf("expected replicas %d and readyReplicas %d, saw %d and %d", w.replicas, w.replicas, st.Replicas, st.ReadyReplicas)
	case st.Release == nil:
		return errors.New("expected status.release, saw none")
	case st.Release.Name != releaseName(name) || st.Release.Revision != w.revision || st.Release.Status != "deployed":
		return fmt.Errorf("expected status.release %s revision %d deployed, saw %s revision %d %s",
			releaseName(name), w.revision, st.Release.Name, st.Release.Revision, st.Release.Status)
	}
	for _, typ := range []string{"Released", "Ready"} {
		c := condition(st.Conditions, typ)
		if c == nil {
			return fmt.Errorf("expected condition %s, saw none", typ)
		}
		if c.Status != metav1.ConditionTrue || c.ObservedGeneration != gen {
			return fmt.Errorf("expected condition %s True at generation %d, saw %s at generation %d (%s: %s)",
				typ, gen, c.Status, c.ObservedGeneration, c.Reason, c.Message)
		}
	}
	return nil
}

// conditionsTrueAt reports whether Released and Ready are both True for generation gen.
func conditionsTrueAt(conds []metav1.Condition, gen int64) bool {
	for _, typ := range []string{"Released", "Ready"} {
		c := condition(conds, typ)
		if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != gen {
			return false
		}
	}
	return true
}

// checkDeployment gets Deployment name and checks that it runs replicas ready
// replicas of image with container port port, under the labels of name.
func checkDeployment(t *testing.T, name string, replicas int32, image string, port int32) *appsv1.Deployment {
	t.Helper()
	var d appsv1.Deployment
	mustGetJSON(t, &d, "deployment", name, "-n", namespace)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != replicas {
		t.Errorf("Deployment %s: expected spec.replicas %d, saw %s", name, replicas, toJSON(d.Spec.Replicas))
	}
	if d.Status.ReadyReplicas != replicas || d.Status.UpdatedReplicas != replicas {
		t.Errorf("Deployment %s: expected %d ready and updated replicas, saw %d ready, %d updated",
			name, replicas, d.Status.ReadyReplicas, d.Status.UpdatedReplicas)
	}
	if got := d.Labels["app"]; got != name {
		t.Errorf("Deployment %s: expected label app=%s, saw app=%q", name, name, got)
	}
	cs := d.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("Deployment %s: expected 1 container, saw %d", name, len(cs))
	}
	if cs[0].Image != image {
		t.Errorf("Deployment %s: expected image %s, saw %s", name, image, cs[0].Image)
	}
	if len(cs[0].Ports) != 1 || cs[0].Ports[0].ContainerPort != port {
		t.Errorf("Deployment %s: expected one container port %d, saw %s", name, port, toJSON(cs[0].Ports))
	}
	return &d
}

// checkService checks that Service name exposes port for the pods of name.
func checkService(t *testing.T, name string, port int32) *corev1.Service {
	t.Helper()
	var s corev1.Service
	mustGetJSON(t, &s, "service", name, "-n", namespace)
	if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Port != port {
		t.Errorf("Service %s: expected one port %d, saw %s", name, port, toJSON(s.Spec.Ports))
	}
	if got := s.Spec.Selector["app"]; got != name {
		t.Errorf("Service %s: expected selector app=%s, saw %s", name, name, toJSON(s.Spec.Selector))
	}
	if got := s.Labels["app"]; got != name {
		t.Errorf("Service %s: expected label app=%s, saw app=%q", name, name, got)
	}
	return &s
}

// helmRelease returns release name in the namespace as `helm list` shows it,
// or nil when it does not list it.
func helmRelease(t *testing.T, name string) *helmListEntry {
	t.Helper()
	var list []helmListEntry
	if err := json.Unmarshal([]byte(helm(t, "list", "-n", namespace, "-o", "json")), &list); err != nil {
		t.Fatalf("decoding `helm list -o json`: %v", err)
	}
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}

// checkHelmRelease checks that `helm list` shows release deployed at revision.
func checkHelmRelease(t *testing.T, release string, revision int) {
	t.Helper()
	rel := helmRelease(t, release)
	if rel == nil {
		t.Fatalf("helm list -n %s: expected release %s, saw none", namespace, release)
	}
	if rel.Status != "deployed" || rel.Revision != fmt.Sprint(revision) || rel.Chart != "webapp-0.1.0" {
		t.Errorf("helm list: expected %s deployed at revision %d of chart webapp-0.1.0, saw %s at revision %s of chart %s",
			release, revision, rel.Status, rel.Revision, rel.Chart)
	}
}

// checkHelmValues checks that the release's user-supplied values are the
// WebApp's spec, and that this spec is wantSpec.
func checkHelmValues(t *testing.T, wa *webApp, wantSpec map[string]any) {
	t.Helper()
	release := releaseName(wa.Metadata.Name)
	var vals map[string]any
	if err := json.Unmarshal([]byte(helm(t, "get", "values", release, "-n", namespace, "-o", "json")), &vals); err != nil {
		t.Fatalf("decoding `helm get values %s -o json`: %v", release, err)
	}
	if !reflect.DeepEqual(vals, wa.Spec) {
		t.Errorf("helm get values %s: expected the WebApp's spec %s, saw %s", release, toJSON(wa.Spec), toJSON(vals))
	}
	want, err := normalizeJSON(wantSpec)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, any(wa.Spec)) {
		t.Errorf("WebApp %s: expected spec %s, saw %s", wa.Metadata.Name, toJSON(want), toJSON(wa.Spec))
	}
}

// specOf reads the spec of the custom resource in a YAML file of the repository.
func specOf(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	var obj struct {
		Spec map[string]any `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &obj); err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	return obj.Spec
}

// eventsOf returns the events about the object with uid, as `kubectl get
// events` lists them.
func eventsOf(t *testing.T, uid string) []corev1.Event {
	t.Helper()
	var list corev1.EventList
	mustGetJSON(t, &list, "events", "-n", namespace, "--field-selector", "involvedObject.uid="+uid)
	return list.Items
}

// waitEvent waits for an event of reason about the object with uid whose
// message contains note.
func waitEvent(t *testing.T, uid, reason, note string) {
	t.Helper()
	eventually(t, fmt.Sprintf("a %s event mentioning %q", reason, note), func() error {
		var seen []string
		for _, e := range eventsOf(t, uid) {
			if e.Reason == reason && strings.Contains(e.Message, note) {
				return nil
			}
			seen = append(seen, e.Reason+": "+e.Message)
		}
		return fmt.Errorf("expected a %s event mentioning %q about uid %s, saw %q", reason, note, uid, seen)
	})
}

// noObjectsLeft says what of WebApp name is still in the cluster: the custom
// resource, its objects, its Helm release or the release's storage Secrets.
func noObjectsLeft(t *testing.T, name string) error {
	t.Helper()
	var left []string
	if out, err := run("kubectl", "get", "webapp", "-n", namespace, "--ignore-not-found", "-o", "name", name); err != nil {
		return err
	} else if s := strings.TrimSpace(out); s != "" {
		left = append(left, s)
	}
	if out, err := run("kubectl", "get", "deployment,service,ingress", "-n", namespace, "-l", "app="+name, "-o", "name"); err != nil {
		return err
	} else if s := strings.TrimSpace(out); s != "" {
		left = append(left, strings.Fields(s)...)
	}
	release := releaseName(name)
	if helmRelease(t, release) != nil {
		left = append(left, "helm release "+release)
	}
	if out, err := run("kubectl", "get", "secrets", "-n", namespace, "-l", "owner=helm,name="+release, "-o", "name"); err != nil {
		return err
	} else if s := strings.TrimSpace(out); s != "" {
		left = append(left, strings.Fields(s)...)
	}
	if len(left) > 0 {
		return fmt.Errorf("expected nothing left of WebApp %s, saw %v", name, left)
	}
	return nil
}

// startClean removes what an earlier, interrupted run left of WebApp name,
// and registers the cleanup that removes it again when the test ends, passed
// or failed. It also logs the WebApp, its objects and the manager's log when
// the test fails.
func startClean(t *testing.T, name string) {
	t.Helper()
	logManagerOnFailure(t)
	removeWebApp(t, name)
	t.Cleanup(func() { removeWebApp(t, name) })
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		// Events outlive their objects: those of this WebApp only, when it still exists.
		events := "involvedObject.name=" + name
		if uid, err := run("kubectl", "get", "webapp", name, "-n", namespace, "-o", "jsonpath={.metadata.uid}"); err == nil && uid != "" {
			events = "involvedObject.uid=" + uid
		}
		for _, args := range [][]string{
			{"get", "webapp", name, "-n", namespace, "-o", "yaml"},
			{"get", "deployment,service,ingress,pods", "-n", namespace, "-l", "app=" + name},
			{"get", "events", "-n", namespace, "--field-selector", events},
		} {
			out, stderr, _ := runFull("kubectl", args...)
			t.Logf("state at failure: kubectl %s:\n%s%s", strings.Join(args, " "), out, stderr)
		}
	})
}

// removeWebApp deletes WebApp name and waits for rudder to uninstall its
// release. Should rudder not get there (a dead manager), it removes the
// finalizer and the release itself, so the next run starts clean; the test
// fails either way.
func removeWebApp(t *testing.T, name string) {
	t.Helper()
	if _, err := run("kubectl", "delete", "webapp", name, "-n", namespace, "--ignore-not-found", "--wait=true", "--timeout=2m"); err != nil {
		t.Errorf("cleanup: deleting WebApp %s: %v; removing its finalizer and release by hand", name, err)
		_, _ = run("kubectl", "patch", "webapp", name, "-n", namespace, "--type", "merge", "-p", `{"metadata":{"finalizers":null}}`)
		_, _ = run("helm", "uninstall", releaseName(name), "-n", namespace, "--ignore-not-found")
	}
	eventually(t, fmt.Sprintf("nothing left of WebApp %s", name), func() error { return noObjectsLeft(t, name) })
}
