package helm

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"
	"slices"
	"strconv"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
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
// values and manifest: an upgrade of a release with ten stored revisions
// paid for ten of them, and now for one.
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

// QueryLean lists the storage Secrets labels select, as Helm's Secrets
// driver does, and decodes the newest revision that decodes and every one
// labeled deployed. A revision that does not decode is left out, as Helm
// leaves it out.
func (d secretsDriver) QueryLean(labels map[string]string) ([]*release.Release, error) {
	items, err := d.query(labels)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(items, func(a, b corev1.Secret) int { return cmp.Compare(versionLabel(&b), versionLabel(&a)) })
	rels := make([]*release.Release, 0, len(items))
	haveNewest := false
	for i := range items {
		s := &items[i]
		if v := versionLabel(s); haveNewest && v > 0 && s.Labels["status"] != release.StatusDeployed.String() {
			d.read.set(s.Name, s.ResourceVersion)
			rels = append(rels, outline(s, v))
			continue
		}
		rls := d.decode(s, "query")
		if rls == nil {
			continue
		}
		rels = append(rels, rls)
		haveNewest = true
	}
	return rels, nil
}

// versionLabel is the revision number a storage Secret's version label says,
// or 0 when it says none.
func versionLabel(s *corev1.Secret) int {
	v, err := strconv.Atoi(s.Labels["version"])
	if err != nil || v < 1 {
		return 0
	}
	return v
}

// outline is the release of storage Secret s, revision version, as far as
// the Secret's labels tell it.
func outline(s *corev1.Secret, version int) *release.Release {
	return &release.Release{
		Name:      s.Labels["name"],
		Namespace: s.Namespace,
		Version:   version,
		Info:      &release.Info{Status: release.Status(s.Labels["status"])},
		Labels:    s.Labels,
	}
}

// gzipMagic opens every gzip stream; Helm stored releases without
// compression before it had it, and still reads them.
var gzipMagic = []byte{0x1f, 0x8b, 0x08}

// decodeRelease decodes a storage Secret's release data as Helm's driver
// does: base64, then gunzip when it is gzipped, then JSON.
func decodeRelease(data []byte) (*release.Release, error) {
	b := make([]byte, base64.StdEncoding.DecodedLen(len(data)))
	n, err := base64.StdEncoding.Decode(b, data)
	if err != nil {
		return nil, err
	}
	b = b[:n]
	if bytes.HasPrefix(b, gzipMagic) {
		r, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		if b, err = io.ReadAll(r); err != nil {
			return nil, err
		}
		if err := r.Close(); err != nil {
			return nil, err
		}
	}
	var rls release.Release
	if err := json.Unmarshal(b, &rls); err != nil {
		return nil, err
	}
	return &rls, nil
}
