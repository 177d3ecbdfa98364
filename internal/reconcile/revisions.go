package reconcile

import (
	"encoding/json"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/owner"
	"github.com/rudder-operator/rudder/internal/storage"
)

// revision is a decoded stored revision and the objects of its manifest, with
// namespaces filled in as Helm applied them. Each get returns objects of its
// own, for one reconcile to read and change; what assess saw of them is
// shared by every get of the revision.
type revision struct {
	*helm.Release
	objects []*unstructured.Unstructured
	seen    []seenObject // one per object
}

// seenAt returns what assess last found of the revision's object i.
func (v *revision) seenAt(i int) *seenObject {
	if i < len(v.seen) {
		return &v.seen[i]
	}
	return &seenObject{}
}

// decoded is a revision as the cache keeps it: its objects as one JSON
// array deflated to about a third (deflate), where the JSON is itself a
// fifth of the memory of the same objects unstructured; each get inflates
// and decodes it in far less time than parsing the manifest's YAML.
type decoded struct {
	*helm.Release
	objects []byte
	seen    []seenObject
}

// revisions decode each stored revision once: a revision's Secret is written
// once per status change but its release never changes, and a Secret's UID
// never comes back. Only the revisions a reconcile reads are kept decoded
// (the deployed one, and the newest when it failed); revisions read for
// history keep only their summary.
type revisions struct {
	mu      sync.Mutex
	m       map[types.NamespacedName]byUID[decoded] // by release, then storage Secret
	entries map[types.NamespacedName]byUID[HistoryEntry]
	// written holds the revision this process wrote last, by release, until
	// storage shows it: what Helm just encoded need not be read back.
	written map[types.NamespacedName]*helm.Release
}

// remember keeps rel, just written, to answer the first get of its revision.
func (c *revisions) remember(key types.NamespacedName, rel *helm.Release) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.written == nil {
		c.written = map[types.NamespacedName]*helm.Release{}
	}
	c.written[key] = rel
}

// takeWritten returns the remembered revision when rev is it: same number,
// same holder and revision mark.
func (c *revisions) takeWritten(key types.NamespacedName, rev storage.Revision) *helm.Release {
	rel := c.written[key]
	if rel == nil || rel.Revision != rev.Number || rev.Labels[LabelHolder] == "" ||
		rel.Labels[LabelHolder] != rev.Labels[LabelHolder] || rel.Labels[LabelRevision] != rev.Labels[LabelRevision] {
		return nil
	}
	delete(c.written, key)
	return rel
}

// entry returns the history entry of revision rev of release key. shown is
// what status.history shows for rev's number, if anything: when it is rev's
// entry (recordedFor), rev is not decoded again.
func (c *revisions) entry(h *helm.Getter, key types.NamespacedName, rev storage.Revision, shown *HistoryEntry) (HistoryEntry, error) {
	c.mu.Lock()
	e, ok := c.entries[key].get(rev.UID)
	if d, held := c.m[key].get(rev.UID); !ok && held {
		e, ok = entryOf(d.Release), true
	}
	c.mu.Unlock()
	if !ok {
		if shown != nil && recordedFor(*shown, rev) {
			e = *shown
		} else {
			rel, err := h.Revision(key.Namespace, key.Name, rev.Number)
			if err != nil {
				return HistoryEntry{}, err
			}
			e = entryOf(rel)
		}
		c.mu.Lock()
		c.keepEntry(key, rev.UID, e)
		c.mu.Unlock()
	}
	// The status changes (superseded, failed), and a test run labels the
	// revision; the rest never changes.
	e.Status, e.Test = rev.Status, testOf(rev)
	return e, nil
}

// keepEntry keeps e as the history entry of the revision stored in the
// Secret of UID uid. The caller holds c.mu.
func (c *revisions) keepEntry(key types.NamespacedName, uid types.UID, e HistoryEntry) {
	if c.entries == nil {
		c.entries = map[types.NamespacedName]byUID[HistoryEntry]{}
	}
	c.entries[key] = c.entries[key].set(uid, e)
}

// get returns the decoded revision rev of release key, reading it from storage
// on first use.
func (c *revisions) get(h *helm.Getter, mapper meta.RESTMapper, key types.NamespacedName, rev storage.Revision) (*revision, error) {
	c.mu.Lock()
	d, ok := c.m[key].get(rev.UID)
	rel := c.takeWritten(key, rev)
	c.mu.Unlock()
	if ok {
		return d.revision()
	}
	if rel == nil {
		var err error
		if rel, err = h.Revision(key.Namespace, key.Name, rev.Number); err != nil {
			return nil, err
		}
	}
	objs, err := rel.Objects()
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		if o.GetNamespace() == "" && namespaced(mapper, o) {
			o.SetNamespace(key.Namespace)
		}
		// A revision written before rudder labeled its objects: the label
		// is then put back as drift, and the object enters the cache.
		owner.Stamp(o, key.Name)
	}
	kept := *rel
	kept.Manifest = "" // kept as objects: one copy, not two
	d = decoded{Release: &kept, seen: make([]seenObject, len(objs))}
	if d.objects, err = encodeObjects(objs); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[types.NamespacedName]byUID[decoded]{}
	}
	c.m[key] = c.m[key].set(rev.UID, d)
	return &revision{Release: &kept, objects: objs, seen: d.seen}, nil
}

func (d decoded) revision() (*revision, error) {
	objs, err := decodeObjects(d.objects)
	if err != nil {
		return nil, fmt.Errorf("revision %d: %w", d.Revision, err)
	}
	return &revision{Release: d.Release, objects: objs, seen: d.seen}, nil
}

// encodeObjects encodes a revision's objects as one JSON array, deflated.
func encodeObjects(objs []*unstructured.Unstructured) ([]byte, error) {
	raw := make([]map[string]any, len(objs))
	for i, o := range objs {
		raw[i] = o.Object
	}
	js, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	return deflate(js)
}

// decodeObjects decodes encodeObjects' array. Numbers decode as
// helm.ParseManifest decodes them (int64 where integral).
func decodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	js, err := inflate(data)
	if err != nil {
		return nil, err
	}
	var raw []any
	if err := utiljson.Unmarshal(js, &raw); err != nil {
		return nil, err
	}
	objs := make([]*unstructured.Unstructured, len(raw))
	for i, o := range raw {
		m, ok := o.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("object %d is a %T, not an object", i, o)
		}
		objs[i] = &unstructured.Unstructured{Object: m}
	}
	return objs, nil
}

// prune drops what is kept of release key's revisions that storage no longer
// holds (history), and the decoded objects of all but those a reconcile
// reads (read: the newest deployed revision, and the newest when it failed).
func (c *revisions) prune(key types.NamespacedName, history []storage.Revision, read ...*storage.Revision) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(history) == 0 {
		delete(c.m, key)
		delete(c.entries, key)
		delete(c.written, key)
		return
	}
	reads := map[types.UID]bool{}
	for _, r := range read {
		if r != nil {
			reads[r.UID] = true
		}
	}
	for _, d := range c.m[key] {
		if !reads[d.uid] {
			c.keepEntry(key, d.uid, entryOf(d.v.Release))
		}
	}
	if ds, ok := c.m[key]; ok {
		c.m[key] = ds.keep(func(uid types.UID, _ decoded) bool { return reads[uid] })
	}
	keep := make(map[types.UID]bool, len(history))
	for _, r := range history {
		keep[r.UID] = true
	}
	if es, ok := c.entries[key]; ok {
		c.entries[key] = es.keep(func(uid types.UID, _ HistoryEntry) bool { return keep[uid] })
	}
}

func namespaced(mapper meta.RESTMapper, o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil && m.Scope.Name() == meta.RESTScopeNameNamespace
}
