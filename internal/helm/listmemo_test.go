package helm

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The second list of Helm's upgrade (the deployed revisions) is answered from
// the first (every revision) until something is written.
func TestReadVersions_NarrowsTheLastListUntilAWrite(t *testing.T) {
	secret := func(name, status string) corev1.Secret {
		return corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"name": "web", "owner": "helm", "status": status}}}
	}
	var r readVersions
	all := metav1.ListOptions{LabelSelector: "name=web,owner=helm"}
	deployed := metav1.ListOptions{LabelSelector: "name=web,owner=helm,status=deployed"}
	if _, ok := r.narrowed(deployed); ok {
		t.Fatal("answered a list before any was made")
	}
	r.listed(all, &corev1.SecretList{Items: []corev1.Secret{secret("v1", "superseded"), secret("v2", "deployed")}})
	got, ok := r.narrowed(deployed)
	if !ok || len(got.Items) != 1 || got.Items[0].Name != "v2" {
		t.Fatalf("deployed from the last list: %v %v, want v2", got, ok)
	}
	for _, other := range []metav1.ListOptions{
		{LabelSelector: "name=other,owner=helm"},
		{LabelSelector: "owner=helm"},
		{LabelSelector: "name=web,owner=helm", FieldSelector: "type=helm.sh/release.v1"},
	} {
		if _, ok := r.narrowed(other); ok {
			t.Errorf("%+v answered from the list of %q", other, all.LabelSelector)
		}
	}
	r.wrote()
	if _, ok := r.narrowed(deployed); ok {
		t.Error("answered from a list made before a write")
	}
}
