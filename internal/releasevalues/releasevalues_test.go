package releasevalues_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/internal/releasevalues"
	"github.com/rudder-operator/rudder/internal/valuesfrom"
)

const password = "s3cret-never-shown"

// valuesHook returns fixed values, or fails.
type valuesHook struct {
	name   string
	values map[string]any
	err    error
	saw    map[string]any // the values it was given
}

func (h *valuesHook) Name() string      { return h.name }
func (h *valuesHook) Condition() string { return h.name + "Ready" }
func (h *valuesHook) Reconcile(_ context.Context, _ *unstructured.Unstructured, vals map[string]any) (hook.Result, error) {
	h.saw = vals
	return hook.Result{Values: h.values}, h.err
}
func (h *valuesHook) Finalize(context.Context, *unstructured.Unstructured) error { return nil }

func resource(annotations map[string]string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"image": "nginx:1.25", "config": map[string]any{"MODE": "own"}},
	}}
	obj.SetNamespace("shop")
	obj.SetName("web")
	obj.SetAnnotations(annotations)
	return obj
}

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// run computes obj's values through every step of p, as the reconciler and
// rudder diff do.
func run(t *testing.T, p releasevalues.Pipeline, obj *unstructured.Unstructured, hooks ...hook.Hook) releasevalues.Values {
	t.Helper()
	reader := fake.NewClientBuilder().WithObjects(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "shared", ResourceVersion: "3"},
			Data: map[string]string{"values.yaml": "replicas: 3\nconfig:\n  MODE: shared\n  LEVEL: info\n"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db", ResourceVersion: "7"},
			Data: map[string][]byte{"password": []byte(password)}},
	).Build()
	own, err := p.Own(obj)
	if err != nil {
		t.Fatal(err)
	}
	sources, err := p.SourcesOf(obj)
	if err != nil {
		t.Fatal(err)
	}
	v, err := p.Read(context.Background(), reader, obj, sources, own)
	if err != nil {
		t.Fatal(err)
	}
	p.RunHooks(context.Background(), obj, hooks, &v, func(_ hook.Hook, _ hook.Result, err error) bool { return err == nil })
	return v
}

func TestPipeline_SpecOverridesOverSourcesThenHooks(t *testing.T) {
	p := releasevalues.Pipeline{
		Overrides: map[string]string{"image": "registry.local/nginx:1.25"},
		Sources:   []valuesfrom.Source{{Kind: "ConfigMap", Name: "shared"}},
	}
	first := &valuesHook{name: "first", values: map[string]any{"config": map[string]any{"LEVEL": "debug"}}}
	v := run(t, p, resource(nil), first)
	want := `{"config":{"LEVEL":"debug","MODE":"own"},"image":"registry.local/nginx:1.25","replicas":3}`
	if got := encode(t, v.Values); got != want {
		t.Errorf("values %s, want %s: the spec and overrides over the sources, the hook's values over all", got, want)
	}
	if got := encode(t, first.saw); got != `{"config":{"LEVEL":"info","MODE":"own"},"image":"registry.local/nginx:1.25","replicas":3}` {
		t.Errorf("the hook saw %s, want the values before it", got)
	}
	if v.Digested != nil || len(v.Secrets) != 0 {
		t.Errorf("digested %v, secrets %d without a Secret, want none", v.Digested, len(v.Secrets))
	}
}

func TestPipeline_SecretsShowOnlyTheirIdentityInTheDigest(t *testing.T) {
	p := releasevalues.Pipeline{}
	withSecret := resource(map[string]string{valuesfrom.Annotation: `[{"kind":"Secret","name":"db","valuesKey":"password","targetPath":"db.password"}]`})
	h := &valuesHook{name: "h", values: map[string]any{"db": map[string]any{"user": "app"}}}
	v := run(t, p, withSecret, h)
	if got := encode(t, v.Values); !strings.Contains(got, password) || !strings.Contains(got, `"user":"app"`) {
		t.Errorf("values %s, want the Secret's value and the hook's", got)
	}
	if got := encode(t, v.Digested); strings.Contains(got, password) || !strings.Contains(got, `"password":"Secret db `) || !strings.Contains(got, `"user":"app"`) {
		t.Errorf("digested %s, want the Secret's identity and version in place of its value, and the hook's values", got)
	}
	if len(v.Secrets) != 1 || v.Secrets[0] != password {
		t.Errorf("secrets %q, want the Secret's value, for the redactor", v.Secrets)
	}
	without := run(t, p, resource(nil), &valuesHook{name: "h", values: map[string]any{"db": map[string]any{"user": "app"}}})
	if v.Digest() == without.Digest() {
		t.Error("the digest with a Secret's value equals the one without it")
	}
}

func TestPipeline_AHookThatStopsItKeepsTheValuesBefore(t *testing.T) {
	failing := &valuesHook{name: "failing", values: map[string]any{"image": "from-a-failed-hook"}, err: errors.New("down")}
	after := &valuesHook{name: "after", values: map[string]any{"image": "after"}}
	v := run(t, releasevalues.Pipeline{}, resource(nil), failing, after)
	if got := v.Values["image"]; got != "nginx:1.25" {
		t.Errorf("image %v, want the spec's: a failed hook's values are not merged", got)
	}
	if after.saw != nil {
		t.Error("the hook after a failed one ran")
	}
}
