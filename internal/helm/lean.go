package helm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kblabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// leanQuerier answers a release's history query with only some revisions
// decoded: the newest, and every deployed one. The others are outlines,
// a release with the name, namespace, number, status and labels its storage
// Secret's labels give, and nothing else.
type leanQuerier interface {
	QueryLean(labels map[string]string) ([]*release.Release, error)
}

// leanHistory is the storage driver of Helm's upgrade and uninstall, which
// read whole only the newest revision and the deployed ones (Last, Deployed)
// and of every other revision only its number and status (to prune the
// history to MaxHistory, or to purge it). Their history query is answered
// lean; every other query, and every write, goes to the driver. Decoding a
// revision is a base64 decode, a gunzip and a JSON decode of its chart,
// values and manifest: through Helm's Query, an upgrade of a release with ten
// stored revisions pays for ten of them; lean, for one or two.
type leanHistory struct {
	driver.Driver
}

func (l leanHistory) Query(labels map[string]string) ([]*release.Release, error) {
	if q, ok := l.Driver.(leanQuerier); ok && isHistoryQuery(labels) {
		return q.QueryLean(labels)
	}
	return l.Driver.Query(labels)
}

// isHistoryQuery reports whether labels select the whole history of one
// release, as Helm's Storage.History asks for it.
func isHistoryQuery(labels map[string]string) bool {
	return len(labels) == 2 && labels["name"] != "" && labels["owner"] == "helm"
}

// QueryLean lists the metadata of the storage Secrets labels select (no
// Secret's data is read), then reads through Helm's Get the newest revision
// that decodes and every one labeled deployed, and outlines the others. A
// revision that does not decode is left out, as Helm's Query leaves it out.
func (d secretsDriver) QueryLean(labels map[string]string) ([]*release.Release, error) {
	for _, v := range labels {
		if errs := validation.IsValidLabelValue(v); len(errs) != 0 {
			return nil, fmt.Errorf("invalid label value: %q: %s", v, strings.Join(errs, "; "))
		}
	}
	list, err := d.meta.List(context.Background(), metav1.ListOptions{LabelSelector: kblabels.SelectorFromSet(labels).String()})
	if err != nil {
		return nil, fmt.Errorf("query: failed to query with labels: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, driver.ErrReleaseNotFound
	}
	items := list.Items
	slices.SortFunc(items, func(a, b metav1.PartialObjectMetadata) int { return cmp.Compare(versionLabel(&b), versionLabel(&a)) })
	rels := make([]*release.Release, 0, len(items))
	haveNewest := false
	for i := range items {
		s := &items[i]
		if v := versionLabel(s); haveNewest && v > 0 && s.Labels["status"] != release.StatusDeployed.String() {
			d.secrets.read.set(s.Name, s.ResourceVersion)
			rels = append(rels, outline(s, v))
			continue
		}
		rls, err := d.Get(s.Name)
		if errors.Is(err, ErrUndecodable) || errors.Is(err, driver.ErrReleaseNotFound) {
			d.Log("query: %s", err) // as Helm's Query leaves it out
			continue
		}
		if err != nil {
			return nil, err
		}
		// Helm's Get leaves its own labels out, and its Update writes the
		// labels it is given: keep createdAt, as Helm's Query does.
		for _, k := range driver.GetSystemLabels() {
			if v, ok := s.Labels[k]; ok {
				rls.Labels[k] = v
			}
		}
		rels = append(rels, rls)
		haveNewest = true
	}
	return rels, nil
}

// Newest returns the highest revision number the storage Secrets of release
// name say they hold, whether they decode or not (versioner).
func (d secretsDriver) Newest(name string) (int, error) {
	list, err := d.meta.List(context.Background(), metav1.ListOptions{LabelSelector: kblabels.SelectorFromSet(map[string]string{"owner": "helm", "name": name}).String()})
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range list.Items {
		n = max(n, versionLabel(&list.Items[i]))
	}
	return n, nil
}

// versionLabel is the revision number a storage Secret's version label says,
// or 0 when it says none.
func versionLabel(s *metav1.PartialObjectMetadata) int {
	v, err := strconv.Atoi(s.Labels["version"])
	if err != nil || v < 1 {
		return 0
	}
	return v
}

// outline is the release of storage Secret s, revision version, as far as
// the Secret's labels tell it.
func outline(s *metav1.PartialObjectMetadata, version int) *release.Release {
	return &release.Release{
		Name:      s.Labels["name"],
		Namespace: s.Namespace,
		Version:   version,
		Info:      &release.Info{Status: release.Status(s.Labels["status"]), Description: outlined},
		Labels:    s.Labels,
	}
}

// outlined is the description of an outline, which no decoded revision has:
// a revision is never stored with a NUL in it.
const outlined = "\x00outline"

// isOutline reports whether r is an outline, not a decoded revision.
func isOutline(r *release.Release) bool {
	return r.Info != nil && r.Info.Description == outlined
}
