package helm

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func storageSecret(name, status string) corev1.Secret {
	return corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: name + "-" + status,
		Labels: map[string]string{"name": "web", "owner": "helm", "status": status}}}
}

// The second list of Helm's upgrade (the deployed revisions) is answered from
// the first (every revision), and so are the reads that follow, as the
// driver's own writes changed them; a failed write forgets the list.
func TestReadVersions_AnswersFromTheLastListAsWritesChangeIt(t *testing.T) {
	var r readVersions
	all := metav1.ListOptions{LabelSelector: "name=web,owner=helm"}
	deployed := metav1.ListOptions{LabelSelector: "name=web,owner=helm,status=deployed"}
	if _, ok := r.narrowed(deployed); ok {
		t.Fatal("answered a list before any was made")
	}
	r.listed(all, &corev1.SecretList{Items: []corev1.Secret{storageSecret("v1", "superseded"), storageSecret("v2", "deployed")}})
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

	// An upgrade: v3 created pending, v2 superseded, v3 deployed.
	v3 := storageSecret("v3", "pending-upgrade")
	r.wrote("v3", &v3, nil)
	v2 := storageSecret("v2", "superseded")
	r.wrote("v2", &v2, nil)
	v3 = storageSecret("v3", "deployed")
	r.wrote("v3", &v3, nil)
	if got, ok := r.narrowed(deployed); !ok || len(got.Items) != 1 || got.Items[0].Name != "v3" {
		t.Errorf("deployed after the upgrade's writes: %v %v, want v3", got, ok)
	}
	if s, ok := r.held("v2"); !ok || s.Labels["status"] != "superseded" || r.of("v2") != "v2-superseded" {
		t.Errorf("v2 after its update: %v %v at %q, want superseded", s, ok, r.of("v2"))
	}
	r.wrote("v1", nil, nil)
	if _, ok := r.held("v1"); ok || r.of("v1") != "" {
		t.Error("v1 held after its delete")
	}
	if _, ok := r.held("v9"); ok {
		t.Error("a Secret the list never held was answered")
	}
	r.wrote("v3", nil, errors.New("conflict"))
	if _, ok := r.narrowed(deployed); ok {
		t.Error("answered from a list after a write that failed")
	}
	if _, ok := r.held("v2"); ok {
		t.Error("read from a list after a write that failed")
	}
}
