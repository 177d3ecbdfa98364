package stored_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/stored"
	"github.com/rudder-operator/rudder/test/testenv"
)

// TestNewCache_HoldsIdentityAndLabels: a Secret that anyone labeled
// owner=helm, with data and a large annotation, is held as its name, UID
// and labels, which History reads, and nothing else.
func TestNewCache_HoldsIdentityAndLabels(t *testing.T) {
	cfg := testenv.StartFor(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	k8s, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := testenv.Namespace(t, k8s, "storage-")
	forged := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sh.helm.release.v1.web.v1",
			Labels:      map[string]string{"owner": "helm", "name": "web", "version": "1", "status": "deployed"},
			Annotations: map[string]string{"padding": strings.Repeat("x", 200<<10)}},
		Data: map[string][]byte{"release": []byte(strings.Repeat("y", 400<<10))},
	}
	if err := k8s.Create(ctx, forged); err != nil {
		t.Fatal(err)
	}
	c, err := stored.NewCache(cfg, cache.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	testenv.Eventually(t, "the revision in the history", func() error {
		revs, err := stored.History(ctx, c, ns, "web")
		if err != nil {
			return err
		}
		if len(revs) != 1 || revs[0].Number != 1 || revs[0].Status != "deployed" || revs[0].UID == "" {
			return fmt.Errorf("history %+v, want revision 1 deployed", revs)
		}
		return nil
	})
	held := &metav1.PartialObjectMetadata{}
	held.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := c.Get(ctx, client.ObjectKeyFromObject(forged), held); err != nil {
		t.Fatal(err)
	}
	if len(held.Annotations) > 0 || len(held.ManagedFields) > 0 {
		t.Errorf("held %d annotations and %d managed fields, want none", len(held.Annotations), len(held.ManagedFields))
	}
}
