package stored

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"
	"unique"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Labels Helm writes on each storage Secret.
const (
	labelOwner   = "owner"
	labelName    = "name"
	labelStatus  = "status"
	labelVersion = "version"
	ownerHelm    = "helm"
)

// Revision is one stored revision of a release, as its Secret's labels tell.
type Revision struct {
	Number int
	Status string // Helm's status: deployed, failed, superseded, pending-install, …
	// Labels holds every label of the revision, rudder's digests included.
	Labels map[string]string
	// UID is the storage Secret's UID: a revision number can come back after
	// an uninstall, a UID never does.
	UID types.UID
	// Secret is the storage Secret's name, Created when it was created, and
	// ResourceVersion the version of it the cache holds.
	Secret          string
	Created         time.Time
	ResourceVersion string
	// Signed says rudder wrote the revision for the custom resource it is
	// read for (package signature), which History's caller verifies: only
	// then are its labels and status evidence.
	Signed bool
	// Undecodable says its Secret, not signed, does not hold a release Helm
	// can decode, which History's caller found out: it is evidence of
	// nothing, not even of a revision another Helm client serves.
	Undecodable bool
}

// indexRelease indexes the storage cache by release name (Helm's label
// name), so that reading one release's history does not scan every revision
// of its namespace.
const indexRelease = "rudder.dev/release"

// NewCache returns a cache holding only what rudder reads of Helm's storage
// Secrets (label owner=helm), indexed by release: their identity and labels
// (kept, the label keys interned), read through a metadata-only watch, so
// that no Secret's data nor any annotation, however large, that someone put
// on a Secret labeled owner=helm is held. Add it to the manager so that it starts and syncs
// before the controllers.
func NewCache(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
	opts.DefaultLabelSelector = labels.SelectorFromSet(labels.Set{labelOwner: ownerHelm})
	opts.DefaultTransform = func(in any) (any, error) { return kept(in), nil }
	c, err := cache.New(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("creating the release storage cache: %w", err)
	}
	byRelease := func(o client.Object) []string { return []string{o.GetLabels()[labelName]} }
	if err := c.IndexField(context.Background(), Object(), indexRelease, byRelease); err != nil {
		return nil, fmt.Errorf("indexing the release storage cache: %w", err)
	}
	return c, nil
}

// kept returns what the storage cache keeps of a Secret's metadata: what
// History and the controllers' event handlers read.
func kept(in any) any {
	m, ok := in.(*metav1.PartialObjectMetadata)
	if !ok {
		return in
	}
	return &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Labels: interned(m.Labels), CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp}}
}

// interned returns labels with each key, and each value that many Secrets
// repeat (Helm's owner and status), interned: every storage Secret carries
// the same keys, which decoding would otherwise allocate once per Secret.
func interned(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		if k == labelOwner || k == labelStatus {
			v = unique.Make(v).Value()
		}
		out[unique.Make(k).Value()] = v
	}
	return out
}

// Object returns the metadata-only object the storage cache holds.
func Object() client.Object {
	o := &metav1.PartialObjectMetadata{}
	o.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return o
}

// History lists the stored revisions of release name in namespace ns, newest
// first, from a cache made by NewCache.
func History(ctx context.Context, c cache.Cache, ns, name string) ([]Revision, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := c.List(ctx, list, client.InNamespace(ns), client.MatchingFields{indexRelease: name}); err != nil {
		return nil, fmt.Errorf("listing revisions of release %q: %w", name, err)
	}
	revs := make([]Revision, 0, len(list.Items))
	for _, s := range list.Items {
		n, err := strconv.Atoi(s.Labels[labelVersion])
		if err != nil {
			continue // not a revision Helm wrote
		}
		revs = append(revs, Revision{Number: n, Status: s.Labels[labelStatus], Labels: s.Labels, UID: s.UID, Secret: s.Name, Created: s.CreationTimestamp.Time,
			ResourceVersion: s.ResourceVersion})
	}
	sort.Slice(revs, func(i, j int) bool { return revs[i].Number > revs[j].Number })
	return revs, nil
}
