package reconcile

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/stored"
)

const twoObjects = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ns}
spec:
  replicas: 2
  template:
    spec:
      containers: [{name: web, image: "nginx:1.25", ports: [{containerPort: 8080}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ns}
spec: {ports: [{port: 80, targetPort: 8080}]}
`

// written returns revision n of release key as this process just wrote it,
// remembered in m so that a read needs no storage, and its storage record.
func written(m *memory, key types.NamespacedName, n int, status string) stored.Revision {
	labels := map[string]string{stored.LabelHolder: "me", stored.LabelRevision: "mark"}
	m.RememberWritten(key, &helm.Release{Name: key.Name, Namespace: key.Namespace, Revision: n, Status: status, Labels: labels, Manifest: twoObjects})
	return stored.Revision{Number: n, Status: status, Labels: labels, UID: types.UID(status + string(rune('0'+n)))}
}

// Memory keeps a revision's objects encoded: each read decodes them again,
// equal to the manifest's own parse (numbers as int64, namespaces, rudder's
// label), and each reconcile's objects are its own to change.
func TestMemory_RevisionDecodesTheSameObjectsEachTime(t *testing.T) {
	var c memory
	key := types.NamespacedName{Namespace: "ns", Name: "webapp-web"}
	rev := written(&c, key, 1, "deployed")
	first, _, err := c.revision(nil, nil, key, key, rev, "")
	if err != nil {
		t.Fatal(err)
	}
	want, err := helm.ParseManifest(twoObjects)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range want {
		o.SetLabels(map[string]string{"rudder.dev/release": key.Name})
	}
	for i := 0; i < 2; i++ {
		got, _, err := c.revision(nil, nil, key, key, rev, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Objects) != len(want) {
			t.Fatalf("get %d: %d objects, want %d", i, len(got.Objects), len(want))
		}
		for j := range want {
			if !reflect.DeepEqual(got.Objects[j].Object, want[j].Object) {
				t.Errorf("get %d, object %d:\n got %v\nwant %v", i, j, got.Objects[j].Object, want[j].Object)
			}
		}
		got.Objects[0].SetName("changed by this reconcile")
	}
	if first.Objects[0].GetName() != "web" {
		t.Errorf("the first get's object was changed by a later reconcile: %s", first.Objects[0].GetName())
	}
}

// After an upgrade the superseded revision is no longer read: only its
// history entry stays, and storage's deletion of it drops that too.
func TestMemory_PruneKeepsTheRevisionsAReconcileReads(t *testing.T) {
	var c memory
	key := types.NamespacedName{Namespace: "ns", Name: "webapp-web"}
	read := func(r stored.Revision) {
		if _, _, err := c.revision(nil, nil, key, key, r, ""); err != nil {
			t.Fatal(err)
		}
	}
	one := written(&c, key, 1, "deployed")
	read(one)
	one.Status = "superseded"
	two := written(&c, key, 2, "deployed")
	read(two)
	three := written(&c, key, 3, "failed")
	read(three)
	c.pruneRevisions(key, []stored.Revision{three, two, one}, &two, &three)
	for _, r := range []stored.Revision{two, three} {
		if _, ok := c.m[key].cache.decoded.get(r.UID); !ok {
			t.Errorf("revision %d (%s) dropped: a reconcile reads it", r.Number, r.Status)
		}
	}
	if _, ok := c.m[key].cache.decoded.get(one.UID); ok {
		t.Error("superseded revision 1 still decoded")
	}
	if e, ok := c.m[key].cache.entries.get(one.UID); !ok || e.Revision != 1 {
		t.Errorf("history entry of revision 1 = %+v (kept %v), want revision 1's", e, ok)
	}

	c.pruneRevisions(key, []stored.Revision{three, two}, &two, &three)
	if _, ok := c.m[key].cache.entries.get(one.UID); ok {
		t.Error("history entry of revision 1 kept after storage dropped it")
	}
}
