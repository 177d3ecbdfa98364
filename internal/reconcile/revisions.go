package reconcile

import (
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/owner"
	"github.com/rudder-operator/rudder/internal/reconcile/assess"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/stored"
)

// decoded is a revision as the cache keeps it: its objects as one JSON
// array deflated to about a third (deflate), where the JSON is itself a
// fifth of the memory of the same objects unstructured; each get inflates
// and decodes it in far less time than parsing the manifest's YAML.
type decoded struct {
	*helm.Release
	objects []byte
	seen    []assess.Seen
	version string // the storage Secret's resourceVersion decoded
}

// Memory decodes each stored revision once per version of its Secret: a
// Secret's UID never comes back, and rudder and Helm write a revision's
// Secret only to change its status or labels, but whoever may write Secrets
// can overwrite it, and a reconcile rests on what it holds now (a revision
// that no longer decodes is named, not served from memory). Only the
// revisions a reconcile reads are kept decoded
// (the deployed one, and the newest when it failed); revisions read for
// history keep only their summary.

// RememberWritten keeps rel, just written for key, to answer the first read
// of its revision: what Helm just encoded need not be read back.
func (m *memory) RememberWritten(key types.NamespacedName, rel *helm.Release) {
	if m.noCache {
		return
	}
	m.update(key, func(e *entry) { e.cache.written = rel })
}

// takeWritten returns the remembered revision when rev is it (same number,
// same holder and revision mark), and forgets it. The caller holds m.mu.
func (e *entry) takeWritten(rev stored.Revision) *helm.Release {
	rel := e.cache.written
	if rel == nil || rel.Revision != rev.Number || rev.Labels[stored.LabelHolder] == "" ||
		rel.Labels[stored.LabelHolder] != rev.Labels[stored.LabelHolder] || rel.Labels[stored.LabelRevision] != rev.Labels[stored.LabelRevision] {
		return nil
	}
	e.cache.written = nil
	return rel
}

// historyEntry returns the history entry of revision rev of key's release.
// shown is what status.history shows for rev's number, if anything: when it
// is rev's entry (recordedFor), rev is not decoded again.
func (m *memory) historyEntry(h *helm.Getter, key, release types.NamespacedName, rev stored.Revision, shown *status.HistoryEntry) (status.HistoryEntry, error) {
	var e status.HistoryEntry
	var ok bool
	m.lookup(key, func(en *entry) {
		e, ok = en.cache.entries.get(rev.UID)
		if d, held := en.cache.decoded.get(rev.UID); !ok && held {
			e, ok = status.EntryOf(d.Release), true
		}
	})
	if !ok {
		if shown != nil && status.RecordedFor(*shown, rev) {
			e = *shown
		} else {
			rel, err := h.Revision(release.Namespace, release.Name, rev.Number, "")
			if err != nil {
				return status.HistoryEntry{}, err
			}
			e = status.EntryOf(rel)
		}
		if !m.noCache {
			m.update(key, func(en *entry) { en.cache.entries = en.cache.entries.set(rev.UID, e) })
		}
	}
	// The status changes (superseded, failed), and a test run labels the
	// revision; the rest never changes.
	e.Status, e.Test = rev.Status, status.TestOf(rev)
	return e, nil
}

// revision returns the decoded revision rev of key's release, reading it
// from storage on first use, and what assess last found of its objects.
func (m *memory) revision(h *helm.Getter, mapper meta.RESTMapper, key, release types.NamespacedName, rev stored.Revision, resource types.UID) (*status.Revision, []assess.Seen, error) {
	var d decoded
	var ok bool
	var rel *helm.Release
	m.update(key, func(e *entry) {
		d, ok = e.cache.decoded.get(rev.UID)
		// A Secret changed since (relabeled, or overwritten by someone) is
		// decoded again: what it holds now is what Helm reads.
		ok = ok && (d.version == rev.ResourceVersion || rev.ResourceVersion == "")
		rel = e.takeWritten(rev)
	})
	if ok {
		return d.revision()
	}
	if rel == nil {
		var err error
		if rel, err = h.Revision(release.Namespace, release.Name, rev.Number, resource); err != nil {
			return nil, nil, err
		}
	}
	objs, err := rel.Objects()
	if err != nil {
		return nil, nil, err
	}
	for _, o := range objs {
		if o.GetNamespace() == "" && namespaced(mapper, o) {
			o.SetNamespace(release.Namespace)
		}
		// A revision written before rudder labeled its objects: the label
		// is then put back as drift, and the object enters the cache.
		owner.Stamp(o, release.Name)
	}
	kept := *rel
	kept.Manifest, kept.Applied = "", nil // kept as objects: one copy, not two
	d = decoded{Release: &kept, seen: seenApplied(objs, rel.Applied), version: rev.ResourceVersion}
	if d.objects, err = encodeObjects(objs); err != nil {
		return nil, nil, err
	}
	if !m.noCache {
		m.update(key, func(e *entry) { e.cache.decoded = e.cache.decoded.set(rev.UID, d) })
	}
	return &status.Revision{Release: &kept, Objects: objs}, d.seen, nil
}

// seenApplied returns what is seen of objs, a revision's objects, when
// rudder has just applied them and the API server answered applied.
func seenApplied(objs []*unstructured.Unstructured, applied []metav1.PartialObjectMetadata) []assess.Seen {
	seen := make([]assess.Seen, len(objs))
	if len(applied) == 0 {
		return seen
	}
	for i, want := range objs {
		for j := range applied {
			a := &applied[j]
			if a.Name == want.GetName() && a.Namespace == want.GetNamespace() && a.GroupVersionKind().GroupKind() == want.GroupVersionKind().GroupKind() {
				seen[i] = assess.AppliedAs(want, a)
				break
			}
		}
	}
	return seen
}

func (d decoded) revision() (*status.Revision, []assess.Seen, error) {
	objs, err := decodeObjects(d.objects)
	if err != nil {
		return nil, nil, fmt.Errorf("revision %d: %w", d.Revision, err)
	}
	return &status.Revision{Release: d.Release, Objects: objs}, d.seen, nil
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

// verdict is what reading a revision whose labels carry no valid signature
// told: whether it decodes, and whether it was signed by a rudder that
// signed only manifests (signature.Legacy), which its manifest tells.
type verdict struct{ signed, decodes bool }

// verdict reads and decodes revision rev of key's release once, and remembers
// what it found by its storage Secret.
func (m *memory) verdict(h *helm.Getter, key, release types.NamespacedName, rev stored.Revision, resource types.UID) (verdict, error) {
	var v verdict
	var ok bool
	m.lookup(key, func(e *entry) { v, ok = e.cache.verdicts.get(rev.UID) })
	if ok {
		return v, nil
	}
	rel, err := h.Revision(release.Namespace, release.Name, rev.Number, resource)
	switch {
	case errors.Is(err, helm.ErrUndecodable):
	case errors.Is(err, helm.ErrReleaseNotFound):
		return verdict{decodes: true}, nil // gone since the cache saw it
	case err != nil:
		return verdict{}, err
	default:
		v = verdict{signed: rel.Signed, decodes: true}
	}
	if !m.noCache {
		m.update(key, func(e *entry) { e.cache.verdicts = e.cache.verdicts.set(rev.UID, v) })
	}
	return v, nil
}

// pruneRevisions drops what is kept of key's revisions that storage no
// longer holds (history), and the decoded objects of all but those a
// reconcile reads (read: the newest deployed revision, and the newest when
// it failed).
func (m *memory) pruneRevisions(key types.NamespacedName, history []stored.Revision, read ...*stored.Revision) {
	m.lookup(key, func(e *entry) {
		c := &e.cache
		if len(history) == 0 {
			*c = revisionCache{}
			return
		}
		reads := map[types.UID]bool{}
		for _, r := range read {
			if r != nil {
				reads[r.UID] = true
			}
		}
		for _, d := range c.decoded {
			if !reads[d.uid] {
				c.entries = c.entries.set(d.uid, status.EntryOf(d.v.Release))
			}
		}
		c.decoded = c.decoded.keep(func(uid types.UID, _ decoded) bool { return reads[uid] })
		keep := make(map[types.UID]bool, len(history))
		for _, r := range history {
			keep[r.UID] = true
		}
		c.entries = c.entries.keep(func(uid types.UID, _ status.HistoryEntry) bool { return keep[uid] })
		c.verdicts = c.verdicts.keep(func(uid types.UID, _ verdict) bool { return keep[uid] })
	})
}

func namespaced(mapper meta.RESTMapper, o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil && m.Scope.Name() == meta.RESTScopeNameNamespace
}
