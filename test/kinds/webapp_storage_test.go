package kinds_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/test/testenv"
)

var webAppGVK = schema.GroupVersionKind{Group: "webapp.my.domain", Version: "v1", Kind: "WebApp"}

// TestWebApp_KeepsItsClaim: a WebApp's claim, and its data, survive the WebApp's
// deletion and an upgrade to a revision without storage (the path of a
// rollback or a remediation to one: Helm deletes what the new revision lacks
// unless it is kept), with no owner reference for the garbage collector to
// follow; storage.keepOnDelete: false lets it go with the WebApp.
func TestWebApp_KeepsItsClaim(t *testing.T) {
	tests := []struct {
		name     string
		storage  map[string]any
		then     func(t *testing.T, ns string) // what happens to the WebApp "files"
		wantKept bool
	}{
		{name: "deleted", storage: map[string]any{"enabled": true}, then: deleteFiles, wantKept: true},
		{name: "upgraded to a revision without storage", storage: map[string]any{"enabled": true}, wantKept: true,
			then: func(t *testing.T, ns string) {
				app := testenv.NewObject(webAppGVK, ns, "files", nil)
				patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"storage":null}}`))
				if err := k8s.Patch(ctx, app, patch); err != nil {
					t.Fatal(err)
				}
				testenv.Eventually(t, "revision 2 deployed", func() error {
					return revisionsAre(ns, "webapp-files", "1:superseded", "2:deployed")
				})
			}},
		{name: "deleted, keepOnDelete false", storage: map[string]any{"enabled": true, "keepOnDelete": false}, then: deleteFiles},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := namespace(t)
			spec := map[string]any{"image": "nginx:1.25", "replicas": int64(1), "port": int64(80), "storage": tt.storage}
			if err := k8s.Create(ctx, testenv.NewObject(webAppGVK, ns, "files", spec)); err != nil {
				t.Fatal(err)
			}
			testenv.Eventually(t, "release webapp-files deployed", func() error {
				return revisionsAre(ns, "webapp-files", "1:deployed")
			})
			var before corev1.PersistentVolumeClaim
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "files"}, &before); err != nil {
				t.Fatal(err)
			}
			tt.then(t, ns)
			var after corev1.PersistentVolumeClaim
			err := k8s.Get(ctx, client.ObjectKeyFromObject(&before), &after)
			kept := err == nil && after.DeletionTimestamp.IsZero()
			switch {
			case kept != tt.wantKept:
				t.Errorf("claim files kept = %v (err %v), want %v", kept, err, tt.wantKept)
			case kept && (after.UID != before.UID || len(after.OwnerReferences) != 0):
				t.Errorf("claim files: UID %s (was %s), owners %v; want the same claim and no owner", after.UID, before.UID, after.OwnerReferences)
			}
		})
	}
}

// deleteFiles deletes the WebApp "files" of ns and waits until it is gone.
func deleteFiles(t *testing.T, ns string) {
	app := testenv.NewObject(webAppGVK, ns, "files", nil)
	if err := k8s.Delete(ctx, app); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "WebApp files gone", func() error { return testenv.Gone(k8s.Get(ctx, client.ObjectKeyFromObject(app), app)) })
}
