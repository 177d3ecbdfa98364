package hook_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/rudder-operator/rudder/internal/hook"
)

// The hook of docs/adding-a-kind.md, which quotes it (test/guide checks the quote).

// SecretCheck holds a kind's Helm steps until the Secret named by the value
// auth.existingSecret exists, and reports it in status.authSecret.
type SecretCheck struct {
	// Reader reads Secrets; rudder's manager gives its API reader.
	Reader client.Reader
}

// Name is how watches.yaml enables the hook.
func (h *SecretCheck) Name() string { return "auth-secret" }

// Condition is the one condition the hook owns.
func (h *SecretCheck) Condition() string { return "AuthSecretFound" }

// Reconcile checks the Secret; its error blocks Helm and shows in AuthSecretFound.
func (h *SecretCheck) Reconcile(ctx context.Context, obj *unstructured.Unstructured, values map[string]any) (hook.Result, error) {
	name, _, _ := unstructured.NestedString(values, "auth", "existingSecret")
	if name == "" {
		return hook.Result{Condition: metav1.Condition{Status: metav1.ConditionTrue, Reason: "NotRequired",
			Message: "spec.auth.existingSecret is not set"}}, nil
	}
	var s corev1.Secret
	if err := h.Reader.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return hook.Result{}, fmt.Errorf("secret %s not found: create it and rudder goes on", name)
		}
		return hook.Result{}, fmt.Errorf("reading secret %s: %w", name, err)
	}
	return hook.Result{
		Status:    map[string]any{"authSecret": name},
		Condition: metav1.Condition{Status: metav1.ConditionTrue, Reason: "Found", Message: "secret " + name + " found"},
	}, nil
}

// Finalize has nothing to clean up: the Secret is the user's.
func (h *SecretCheck) Finalize(context.Context, *unstructured.Unstructured) error { return nil }

// StatusSchema declares status.authSecret, so that the generated CRD keeps it.
func (h *SecretCheck) StatusSchema() map[string]apiextensionsv1.JSONSchemaProps {
	return map[string]apiextensionsv1.JSONSchemaProps{
		"authSecret": {Type: "string", Description: "Secret holding the cache's password."},
	}
}

// The hook and the interfaces it promises to implement.
var (
	_ hook.Hook          = (*SecretCheck)(nil)
	_ hook.StatusSchemer = (*SecretCheck)(nil)
)

// ExampleRegistry registers a hook, resolves it by the name a watches.yaml
// entry lists, and runs it for a Cache whose Secret exists.
func ExampleRegistry() {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "my-cache-auth"}}
	var registry hook.Registry
	if err := registry.Add(&SecretCheck{Reader: fake.NewClientBuilder().WithObjects(secret).Build()}); err != nil {
		fmt.Println(err)
		return
	}
	hooks, err := registry.Resolve([]string{"auth-secret"})
	if err != nil {
		fmt.Println(err)
		return
	}
	cache := &unstructured.Unstructured{}
	cache.SetNamespace("default")
	cache.SetName("my-cache")
	values := map[string]any{"auth": map[string]any{"existingSecret": "my-cache-auth"}}
	res, err := hooks[0].Reconcile(context.Background(), cache, values)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(hooks[0].Condition(), res.Condition.Status, res.Condition.Message)
	fmt.Println("status.authSecret:", res.Status["authSecret"])

	values["auth"] = map[string]any{"existingSecret": "missing"}
	_, err = hooks[0].Reconcile(context.Background(), cache, values)
	fmt.Println(err)
	// Output:
	// AuthSecretFound True secret my-cache-auth found
	// status.authSecret: my-cache-auth
	// secret missing not found: create it and rudder goes on
}
