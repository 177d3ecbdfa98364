//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// driftTimeout is how soon an object deleted or edited by hand must be back.
const driftTimeout = time.Minute

// TestWebApp_SeedSampleAndCommands applies the seed's sample WebApp ("示例CR",
// config/samples/webapp_v1_webapp.yaml), checks every object it asks for, runs
// the seed's "kubectl操作命令" and troubleshooting commands on it verbatim and
// checks that their output makes sense, then edits and deletes its objects by
// hand and expects rudder to put them back without a new release revision.
func TestWebApp_SeedSampleAndCommands(t *testing.T) {
	const name = "my-webapp"
	release := releaseName(name)
	startClean(t, name)

	seed(t, "kubectl apply -f config/samples/webapp_v1_webapp.yaml")
	wa := waitRunning(t, name, want{replicas: 3, revision: 1})
	uid := string(wa.Metadata.UID)
	checkHelmRelease(t, release, 1)
	checkHelmValues(t, wa, specOf(t, "config/samples/webapp_v1_webapp.yaml"))
	checkSampleObjects(t, name)

	t.Run("kubectl get webapp", func(t *testing.T) {
		header, row := tableRow(t, seed(t, "kubectl get webapp"), name)
		checkHeader(t, header, "NAME", "REPLICAS", "READY", "PHASE", "AGE")
		if got := row[1:4]; !slices.Equal(got, []string{"3", "3", "Running"}) {
			t.Errorf("expected REPLICAS READY PHASE 3 3 Running, saw %v", got)
		}
	})
	t.Run("kubectl get webapp -o wide", func(t *testing.T) {
		header, row := tableRow(t, seed(t, "kubectl get webapp -o wide"), name)
		checkHeader(t, header, "NAME", "REPLICAS", "READY", "PHASE", "AGE", "IMAGE", "REVISION", "MESSAGE")
		if len(row) < 8 {
			t.Fatalf("expected 8 columns, saw %q", row)
		}
		got := []string{row[1], row[2], row[3], row[5], row[6], strings.Join(row[7:], " ")}
		if w := []string{"3", "3", "Running", "nginx:1.25", "1", messageAllReady}; !slices.Equal(got, w) {
			t.Errorf("expected REPLICAS READY PHASE IMAGE REVISION MESSAGE %q, saw %q", w, got)
		}
	})
	t.Run("kubectl describe webapp my-webapp", func(t *testing.T) {
		out := seed(t, "kubectl describe webapp my-webapp")
		for _, re := range []string{
			`(?m)^Name:\s+my-webapp$`,
			`(?m)^Namespace:\s+default$`,
			`(?m)^Kind:\s+WebApp$`,
			`(?m)^\s+Phase:\s+Running$`,
			`(?m)^\s+Message:\s+All replicas are ready$`,
			`(?m)^\s+Ready Replicas:\s+3$`,
			`(?m)^\s+Image:\s+nginx:1.25$`,
			`(?m)^Events:`,
			`(?m)^\s+Normal\s+InstallSucceeded\s+.*Installed revision 1 of release webapp-my-webapp`,
		} {
			if !regexp.MustCompile(re).MatchString(out) {
				t.Errorf("expected a line matching %s, saw:\n%s", re, out)
			}
		}
	})
	t.Run("kubectl get webapp my-webapp -o yaml", func(t *testing.T) {
		var got webApp
		if err := yaml.Unmarshal([]byte(seed(t, "kubectl get webapp my-webapp -o yaml")), &got); err != nil {
			t.Fatalf("expected YAML, saw an error: %v", err)
		}
		if err := checkRunning(&got, name, want{replicas: 3, revision: 1}); err != nil {
			t.Error(err)
		}
		if want := specOf(t, "config/samples/webapp_v1_webapp.yaml"); !reflect.DeepEqual(got.Spec, want) {
			t.Errorf("expected spec %s, saw %s", toJSON(want), toJSON(got.Spec))
		}
		if !slices.Contains(got.Metadata.Finalizers, finalizer) {
			t.Errorf("expected finalizer %s, saw %v", finalizer, got.Metadata.Finalizers)
		}
	})
	t.Run("kubectl get webapp my-webapp -o jsonpath={.status}", func(t *testing.T) {
		var st webAppStatus
		if err := json.Unmarshal([]byte(seed(t, `kubectl get webapp my-webapp -o jsonpath='{.status}'`)), &st); err != nil {
			t.Fatalf("expected the status as JSON, saw an error: %v", err)
		}
		got := fmt.Sprintf("%s %q %d/%d", st.Phase, st.Message, st.ReadyReplicas, st.Replicas)
		if w := fmt.Sprintf("%s %q %d/%d", phaseRunning, messageAllReady, 3, 3); got != w {
			t.Errorf("expected phase, message and ready/replicas %s, saw %s", w, got)
		}
		w := releaseStatus{Name: release, Revision: 1, Chart: "webapp", ChartVersion: "0.1.0", AppVersion: "1.25", Status: "deployed"}
		if st.Release == nil || *st.Release != w {
			t.Errorf("expected release %+v, saw %s", w, toJSON(st.Release))
		}
	})
	t.Run("kubectl get webapp my-webapp -o jsonpath={.status.conditions}", func(t *testing.T) {
		var conds []metav1.Condition
		if err := json.Unmarshal([]byte(seed(t, `kubectl get webapp my-webapp -o jsonpath='{.status.conditions}'`)), &conds); err != nil {
			t.Fatalf("expected the conditions as a JSON list, saw an error: %v", err)
		}
		for _, w := range []metav1.Condition{
			{Type: "Released", Status: metav1.ConditionTrue, Reason: "InstallSucceeded", Message: "Revision 1 is deployed"},
			{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", Message: messageAllReady},
		} {
			c := condition(conds, w.Type)
			if c == nil || c.Status != w.Status || c.Reason != w.Reason || c.Message != w.Message {
				t.Errorf("expected condition %s %s (%s: %s), saw %s", w.Type, w.Status, w.Reason, w.Message, toJSON(c))
			}
		}
	})
	t.Run("kubectl get deployment,service,ingress -l app=my-webapp", func(t *testing.T) {
		got := objectNames(seed(t, "kubectl get deployment,service,ingress -l app=my-webapp"))
		w := []string{"deployment.apps/my-webapp", "ingress.networking.k8s.io/my-webapp", "service/my-webapp"}
		if !slices.Equal(got, w) {
			t.Errorf("expected exactly %v, saw %v", w, got)
		}
	})
	t.Run("kubectl get events --field-selector involvedObject.name=my-webapp", func(t *testing.T) {
		out := seed(t, "kubectl get events --field-selector involvedObject.name=my-webapp")
		re := regexp.MustCompile(`(?m)\sNormal\s+InstallSucceeded\s+webapp/my-webapp\s+Installed revision 1 of release webapp-my-webapp`)
		if !re.MatchString(out) {
			t.Errorf("expected an InstallSucceeded event of webapp/my-webapp, saw:\n%s", out)
		}
		// Events outlive their object: make sure this one is about this
		// WebApp, not one of an earlier run.
		waitEvent(t, uid, "InstallSucceeded", "Installed revision 1 of release "+release)
	})
	t.Run("kubectl api-resources | grep webapp", func(t *testing.T) {
		var lines []string
		for _, l := range strings.Split(seed(t, "kubectl api-resources"), "\n") {
			if strings.Contains(l, "webapp") {
				lines = append(lines, l)
			}
		}
		if len(lines) != 1 {
			t.Fatalf("expected one line mentioning webapp, saw %q", lines)
		}
		w := []string{"webapps", "wa", "webapp.my.domain/v1", "true", "WebApp"}
		if got := strings.Fields(lines[0]); !slices.Equal(got, w) {
			t.Errorf("expected NAME SHORTNAMES APIVERSION NAMESPACED KIND %v, saw %v", w, got)
		}
	})
	t.Run("kubectl explain webapp.spec", func(t *testing.T) {
		out := seed(t, "kubectl explain webapp.spec")
		for _, re := range []string{
			`(?m)^KIND:\s+WebApp$`,
			`(?m)^FIELD:\s+spec <Object>$`,
			`(?m)^  image\s+<string> -required-\n\s+Container image to run`,
			`(?m)^  port\s+<integer> -required-\n\s+Port the application listens on`,
			`(?m)^  replicas\s+<integer>\n\s+Number of pod replicas`,
			`(?m)^  ingress\s+<Object>\n\s+\S`,
		} {
			if !regexp.MustCompile(re).MatchString(out) {
				t.Errorf("expected a field with its description matching %s, saw:\n%s", re, out)
			}
		}
	})
	t.Run("kubectl explain webapp.status", func(t *testing.T) {
		out := seed(t, "kubectl explain webapp.status")
		for _, field := range []string{"conditions", "message", "observedGeneration", "phase", "readyReplicas", "release", "replicas"} {
			re := `(?m)^  ` + field + `\s+<[^>]+>\n(\s+enum: .*\n)?\s+\S`
			if !regexp.MustCompile(re).MatchString(out) {
				t.Errorf("expected status field %s with a description (%s), saw:\n%s", field, re, out)
			}
		}
	})
	t.Run("kubectl get crd webapps.webapp.my.domain -o yaml", func(t *testing.T) {
		checkCRD(t, seed(t, "kubectl get crd webapps.webapp.my.domain -o yaml"))
	})

	seed(t, `kubectl patch webapp my-webapp --type merge -p '{"spec":{"replicas":5}}'`)
	waitRunning(t, name, want{replicas: 5, revision: 2})
	checkDeployment(t, name, 5, "nginx:1.25", 80)
	checkHelmRelease(t, release, 2)

	// Drift: objects deleted or changed by hand come back as the deployed
	// revision has them, without a new revision.
	svc := checkService(t, name, 80)
	seed(t, "kubectl delete service my-webapp")
	eventuallyWithin(t, driftTimeout, "Service my-webapp put back", func() error {
		var s corev1.Service
		found, err := getJSON(&s, "service", name, "-n", namespace)
		switch {
		case err != nil:
			return err
		case !found:
			return fmt.Errorf("expected Service %s back, saw NotFound", name)
		case s.UID == svc.UID:
			return fmt.Errorf("expected a new Service %s (the old one, uid %s, was deleted), saw the old uid", name, svc.UID)
		}
		return nil
	})
	checkService(t, name, 80)
	waitEvent(t, uid, "DriftRepaired", "Put back Service/"+name+", deleted outside its release")
	checkHistory(t, release, seed(t, "helm history webapp-my-webapp -n default"), 2)

	seed(t, "kubectl set image deployment/my-webapp webapp=evil:1")
	eventuallyWithin(t, driftTimeout, "Deployment my-webapp's image put back to nginx:1.25", func() error {
		out, err := run("kubectl", "get", "deployment", name, "-n", namespace, "-o", "jsonpath={.spec.template.spec.containers[0].image}")
		if err != nil {
			return err
		}
		if out != "nginx:1.25" {
			return fmt.Errorf("expected image nginx:1.25, saw %q", out)
		}
		return nil
	})
	waitRunning(t, name, want{replicas: 5, revision: 2})
	checkDeployment(t, name, 5, "nginx:1.25", 80)
	checkHistory(t, release, helm(t, "history", release, "-n", namespace), 2)

	seed(t, "kubectl delete webapp my-webapp")
	eventually(t, "nothing left of WebApp my-webapp", func() error {
		if err := expectNoResources(runFull("kubectl", "get", "deployment,service,ingress", "-l", "app=my-webapp")); err != nil {
			return err
		}
		return noObjectsLeft(t, name)
	})
}

// checkSampleObjects checks the Deployment, Service and Ingress the sample
// WebApp asks for.
func checkSampleObjects(t *testing.T, name string) {
	t.Helper()
	d := checkDeployment(t, name, 3, "nginx:1.25", 80)
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	wantEnv := []corev1.EnvVar{{Name: "ENVIRONMENT", Value: "production"}, {Name: "LOG_LEVEL", Value: "info"}}
	if !reflect.DeepEqual(c.Env, wantEnv) {
		t.Errorf("Deployment %s: expected env %s, saw %s", name, toJSON(wantEnv), toJSON(c.Env))
	}
	for _, q := range []struct {
		what string
		list corev1.ResourceList
		res  corev1.ResourceName
		want string
	}{
		{"requests", c.Resources.Requests, corev1.ResourceCPU, "100m"},
		{"requests", c.Resources.Requests, corev1.ResourceMemory, "128Mi"},
		{"limits", c.Resources.Limits, corev1.ResourceCPU, "500m"},
		{"limits", c.Resources.Limits, corev1.ResourceMemory, "512Mi"},
	} {
		got, ok := q.list[q.res]
		if !ok || got.Cmp(resource.MustParse(q.want)) != 0 {
			t.Errorf("Deployment %s: expected resources.%s.%s %s, saw %s", name, q.what, q.res, q.want, toJSON(q.list))
		}
	}
	if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Errorf("Deployment %s: expected pod securityContext runAsNonRoot true, saw %s", name, toJSON(sc))
	}

	checkService(t, name, 80)

	var ing networkingv1.Ingress
	mustGetJSON(t, &ing, "ingress", name, "-n", namespace)
	const host = "my-webapp.example.com"
	wantTLS := []networkingv1.IngressTLS{{Hosts: []string{host}, SecretName: "my-webapp-tls"}}
	if !reflect.DeepEqual(ing.Spec.TLS, wantTLS) {
		t.Errorf("Ingress %s: expected tls %s, saw %s", name, toJSON(wantTLS), toJSON(ing.Spec.TLS))
	}
	for k, v := range map[string]string{
		"kubernetes.io/ingress.class":    "nginx",
		"cert-manager.io/cluster-issuer": "letsencrypt-prod",
	} {
		if got, ok := ing.Annotations[k]; !ok || got != v {
			t.Errorf("Ingress %s: expected annotation %s=%s, saw %s", name, k, v, toJSON(ing.Annotations))
		}
	}
	rules := ing.Spec.Rules
	if len(rules) != 1 || rules[0].Host != host || rules[0].HTTP == nil || len(rules[0].HTTP.Paths) != 1 {
		t.Fatalf("Ingress %s: expected one rule for host %s with one path, saw %s", name, host, toJSON(rules))
	}
	if b := rules[0].HTTP.Paths[0].Backend.Service; b == nil || b.Name != name || b.Port.Number != 80 {
		t.Errorf("Ingress %s: expected backend Service %s port 80, saw %s", name, name, toJSON(b))
	}
	if got := ing.Labels["app"]; got != name {
		t.Errorf("Ingress %s: expected label app=%s, saw app=%q", name, name, got)
	}
}

// tableRow splits a `kubectl get` table into its header and the row of name.
func tableRow(t *testing.T, out, name string) (header, row []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	header = strings.Fields(lines[0])
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) > 0 && f[0] == name {
			return header, f
		}
	}
	t.Fatalf("expected a row for %s, saw:\n%s", name, out)
	return nil, nil
}

func checkHeader(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("expected columns %v, saw %v", want, got)
	}
}

// objectNames returns the kind/name of each row of a multi-kind `kubectl get`, sorted.
func objectNames(out string) []string {
	var names []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.Contains(f[0], "/") {
			names = append(names, f[0])
		}
	}
	slices.Sort(names)
	return names
}

// checkHistory checks a `helm history` table: revisions 1 to n, n deployed.
func checkHistory(t *testing.T, release, out string, n int) {
	t.Helper()
	var revs []string
	status := ""
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		f := strings.Fields(l)
		if len(f) > 6 {
			revs = append(revs, f[0])
			status = f[6] // REVISION and the five words of UPDATED come first
		}
	}
	var want []string
	for i := 1; i <= n; i++ {
		want = append(want, fmt.Sprint(i))
	}
	if !slices.Equal(revs, want) || status != "deployed" {
		t.Errorf("helm history %s: expected revisions %v with the last deployed (no revision for a repair), saw revisions %v, last %q:\n%s",
			release, want, revs, status, out)
	}
}

// crd is the part of a CustomResourceDefinition checkCRD reads.
type crd struct {
	Spec struct {
		Group string `json:"group"`
		Scope string `json:"scope"`
		Names struct {
			Kind       string   `json:"kind"`
			Plural     string   `json:"plural"`
			Singular   string   `json:"singular"`
			ShortNames []string `json:"shortNames"`
		} `json:"names"`
		Versions []struct {
			Name         string `json:"name"`
			Served       bool   `json:"served"`
			Storage      bool   `json:"storage"`
			Subresources struct {
				Status *struct{} `json:"status"`
				Scale  *struct {
					SpecReplicasPath   string `json:"specReplicasPath"`
					StatusReplicasPath string `json:"statusReplicasPath"`
				} `json:"scale"`
			} `json:"subresources"`
		} `json:"versions"`
	} `json:"spec"`
	Status struct {
		Conditions []metav1.Condition `json:"conditions"`
	} `json:"status"`
}

func checkCRD(t *testing.T, out string) {
	t.Helper()
	var c crd
	if err := yaml.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("expected the CRD as YAML, saw an error: %v", err)
	}
	s := c.Spec
	got := fmt.Sprintf("%s %s %s/%s/%s %v", s.Group, s.Scope, s.Names.Kind, s.Names.Plural, s.Names.Singular, s.Names.ShortNames)
	if w := "webapp.my.domain Namespaced WebApp/webapps/webapp [wa]"; got != w {
		t.Errorf("expected group, scope, names and short names %q, saw %q", w, got)
	}
	if len(s.Versions) != 1 {
		t.Fatalf("expected one version, saw %d", len(s.Versions))
	}
	v := s.Versions[0]
	if v.Name != "v1" || !v.Served || !v.Storage || v.Subresources.Status == nil || v.Subresources.Scale == nil {
		t.Errorf("expected v1 served and stored with the status and scale subresources, saw %s", toJSON(v))
	} else if sc := v.Subresources.Scale; sc.SpecReplicasPath != ".spec.replicas" || sc.StatusReplicasPath != ".status.replicas" {
		t.Errorf("expected scale paths .spec.replicas and .status.replicas, saw %s", toJSON(sc))
	}
	for _, typ := range []string{"NamesAccepted", "Established"} {
		if cond := condition(c.Status.Conditions, typ); cond == nil || cond.Status != metav1.ConditionTrue {
			t.Errorf("expected condition %s True, saw %s", typ, toJSON(cond))
		}
	}
}
