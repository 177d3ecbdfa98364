package ssa_test

import (
	"context"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/ssa"
	"github.com/rudder-operator/rudder/internal/watches"
	"github.com/rudder-operator/rudder/test/testenv"
)

// rendered is a Deployment as a chart renders it.
func rendered(ns string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": ns, "labels": map[string]any{"app": "web"}},
		"spec": map[string]any{
			"replicas": int64(2),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name": "web", "image": "nginx:1.25",
					"env":       []any{map[string]any{"name": "MODE", "value": "prod"}},
					"resources": map[string]any{"limits": map[string]any{"cpu": "0.5"}},
				}}},
			},
		},
		"status": map[string]any{"replicas": int64(2)},
	}}
}

func pointers(t *testing.T, paths ...string) []watches.Pointer {
	t.Helper()
	var out []watches.Pointer
	for _, s := range paths {
		p, err := watches.ParsePointer(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func TestConfig(t *testing.T) {
	containers := func(u *unstructured.Unstructured) []any {
		l, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		return l
	}
	tests := []struct {
		name   string
		ignore []string
		check  func(u *unstructured.Unstructured) bool
	}{
		{name: "status is never applied", check: func(u *unstructured.Unstructured) bool { return u.Object["status"] == nil }},
		{name: "an ignored field is not applied", ignore: []string{"/spec/replicas"},
			check: func(u *unstructured.Unstructured) bool {
				_, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "replicas")
				return !found
			}},
		{name: "a field inside a list element", ignore: []string{"/spec/template/spec/containers/0/resources"},
			check: func(u *unstructured.Unstructured) bool {
				c := containers(u)[0].(map[string]any)
				return c["resources"] == nil && c["image"] == "nginx:1.25"
			}},
		{name: "a whole list element", ignore: []string{"/spec/template/spec/containers/0"},
			check: func(u *unstructured.Unstructured) bool { return len(containers(u)) == 0 }},
		{name: "paths the object does not have", ignore: []string{"/spec/paused", "/spec/template/spec/containers/3/image", "/spec/replicas/x"},
			check: func(u *unstructured.Unstructured) bool {
				return len(containers(u)) == 1 && u.Object["spec"].(map[string]any)["replicas"] == int64(2)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := rendered("ns")
			before := obj.DeepCopy()
			got := ssa.Config(obj, pointers(t, tt.ignore...))
			if !tt.check(got) {
				t.Errorf("config %v", got.Object)
			}
			if !equality.Semantic.DeepEqual(obj.Object, before.Object) {
				t.Errorf("Config changed the rendered object: %v", obj.Object)
			}
		})
	}
}

// TestDrift runs rudder's apply against a real API server after another
// manager's write, and checks what Drift names and what the apply keeps.
func TestDrift(t *testing.T) {
	cfg := testenv.StartFor(t)
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	web := func(d *appsv1.Deployment) *corev1.Container {
		for i, c := range d.Spec.Template.Spec.Containers {
			if c.Name == "web" {
				return &d.Spec.Template.Spec.Containers[i]
			}
		}
		return &corev1.Container{Env: []corev1.EnvVar{{}}}
	}
	tests := []struct {
		name       string
		ignore     []string
		edit       func(d *appsv1.Deployment) // by another manager, an update
		wantFields []string
		kept       func(d *appsv1.Deployment) bool // what the other manager did that a repair keeps
	}{
		{name: "unchanged", edit: func(*appsv1.Deployment) {}},
		{name: "an image rudder applies, edited",
			edit:       func(d *appsv1.Deployment) { web(d).Image = "evil:1" },
			wantFields: []string{`spec.template.spec.containers[name="web"].image`}},
		{name: "an env var rudder applies, edited",
			edit:       func(d *appsv1.Deployment) { web(d).Env[0].Value = "debug" },
			wantFields: []string{`spec.template.spec.containers[name="web"].env[name="MODE"].value`}},
		{name: "a label rudder applies, removed",
			edit:       func(d *appsv1.Deployment) { d.Labels = map[string]string{"other": "x"} },
			wantFields: []string{"metadata.labels.app"},
			kept:       func(d *appsv1.Deployment) bool { return d.Labels["other"] == "x" }},
		{name: "replicas, scaled",
			edit:       func(d *appsv1.Deployment) { d.Spec.Replicas = new(int32(5)) },
			wantFields: []string{"spec.replicas"}},
		{name: "replicas, scaled and ignored", ignore: []string{"/spec/replicas"},
			edit: func(d *appsv1.Deployment) { d.Spec.Replicas = new(int32(5)) },
			kept: func(d *appsv1.Deployment) bool { return *d.Spec.Replicas == 5 }},
		{name: "a sidecar, an env var and a label added by another manager",
			edit: func(d *appsv1.Deployment) {
				d.Labels["policy"] = "added"
				web(d).Env = append(web(d).Env, corev1.EnvVar{Name: "INJECTED", Value: "1"})
				d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "proxy:1"})
			},
			kept: func(d *appsv1.Deployment) bool {
				return d.Labels["policy"] == "added" && len(d.Spec.Template.Spec.Containers) == 2 && len(web(d).Env) == 2
			}},
		{name: "a container rudder applies, removed, is named once",
			edit: func(d *appsv1.Deployment) {
				d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "other", Image: "other:1"}}
			},
			wantFields: []string{`spec.template.spec.containers[name="web"]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := testenv.Namespace(t, c, "ssa-")
			// Helm's create: an update under another manager.
			obj := rendered(ns)
			delete(obj.Object, "status")
			if err := c.Create(ctx, obj, client.FieldOwner("helm")); err != nil {
				t.Fatal(err)
			}
			var d appsv1.Deployment
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), &d); err != nil {
				t.Fatal(err)
			}
			tt.edit(&d)
			if err := c.Update(ctx, &d, client.FieldOwner("someone-else")); err != nil {
				t.Fatal(err)
			}
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
				t.Fatal(err)
			}
			config := ssa.Config(rendered(ns), pointers(t, tt.ignore...))
			applied, err := ssa.Apply(ctx, c, config, true)
			if err != nil {
				t.Fatal(err)
			}
			if applied.GetResourceVersion() != live.GetResourceVersion() {
				t.Fatalf("the dry run wrote: resourceVersion %s, was %s", applied.GetResourceVersion(), live.GetResourceVersion())
			}
			fields, err := ssa.Drift(applied, live)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(fields, tt.wantFields) {
				t.Fatalf("drift %q, want %q", fields, tt.wantFields)
			}

			// The repair: the same apply for real. Nothing differs after it,
			// and what the other manager owns stays.
			now, err := ssa.Apply(ctx, c, config, false)
			if err != nil {
				t.Fatal(err)
			}
			if fields, err := ssa.Drift(now, now); err != nil || len(fields) > 0 {
				t.Errorf("drift after the repair: %q, %v", fields, err)
			}
			again, err := ssa.Apply(ctx, c, config, true)
			if err != nil {
				t.Fatal(err)
			}
			if fields, err := ssa.Drift(again, now); err != nil || len(fields) > 0 {
				t.Errorf("drift found by a second dry run after the repair: %q, %v", fields, err)
			}
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), &d); err != nil {
				t.Fatal(err)
			}
			if tt.kept != nil && !tt.kept(&d) {
				t.Errorf("the repair undid the other manager's fields: %+v", d)
			}
			if len(tt.wantFields) > 0 && (web(&d).Image != "nginx:1.25" || d.Labels["app"] != "web" || web(&d).Env[0].Value != "prod") {
				t.Errorf("the repair did not put rudder's fields back: labels %v, container %+v", d.Labels, web(&d))
			}
		})
	}
}
