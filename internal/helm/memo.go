package helm

import (
	"maps"
	"slices"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// historyMemo is a storage driver that answers a release's history query
// again from what it returned last, until this driver writes anything. Helm's
// upgrade lists the history to find the newest revision, then, with no write
// in between, lists it again to prune it to MaxHistory before it stores the
// new revision (and, over MaxHistory, asks for the deployed revisions too):
// each list is a LIST of the namespace's storage Secrets and a decode of
// every revision. What another writer stores in between is no more missed
// than between Helm's own two lists, and storing a revision number that
// exists fails, as it does for Helm.
type historyMemo struct {
	driver.Driver
	labels map[string]string  // the history query answered: name and owner
	rels   []*release.Release // its answer, nil when there is none to reuse
	lean   bool               // rels was a lean answer (QueryLean): outlines among them
}

// Query answers a history query ({name, owner}) or a deployed-revisions query
// ({name, owner, status}) of the release last queried from its history. A
// lean answer answers only a deployed-revisions query again: its deployed
// revisions are whole.
func (m *historyMemo) Query(labels map[string]string) ([]*release.Release, error) {
	if m.rels != nil {
		if maps.Equal(labels, m.labels) && !m.lean {
			return slices.Clone(m.rels), nil
		}
		if status, ok := labels["status"]; ok && len(labels) == 3 && labels["name"] == m.labels["name"] && labels["owner"] == m.labels["owner"] &&
			(!m.lean || status == release.StatusDeployed.String()) {
			return withStatus(m.rels, status)
		}
	}
	rels, err := m.Driver.Query(labels)
	m.remember(labels, rels, err, false)
	return rels, err
}

// QueryLean answers a history query lean (leanQuerier) when the driver can,
// and again from its last answer until a write.
func (m *historyMemo) QueryLean(labels map[string]string) ([]*release.Release, error) {
	if m.rels != nil && maps.Equal(labels, m.labels) {
		return slices.Clone(m.rels), nil
	}
	q, ok := m.Driver.(leanQuerier)
	if !ok {
		return m.Query(labels)
	}
	rels, err := q.QueryLean(labels)
	m.remember(labels, rels, err, true)
	return rels, err
}

// remember keeps the answer to a history query.
func (m *historyMemo) remember(labels map[string]string, rels []*release.Release, err error, lean bool) {
	if err == nil && isHistoryQuery(labels) {
		m.labels, m.rels, m.lean = maps.Clone(labels), slices.Clone(rels), lean
	}
}

// withStatus returns the revisions of rels whose status is status (what
// their storage Secret's status label says, as Helm writes it), or
// ErrReleaseNotFound, as the Secrets driver answers a query none matches.
func withStatus(rels []*release.Release, status string) ([]*release.Release, error) {
	var out []*release.Release
	for _, r := range rels {
		if r.Info != nil && r.Info.Status.String() == status {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, driver.ErrReleaseNotFound
	}
	return out, nil
}

func (m *historyMemo) Create(key string, rls *release.Release) error {
	m.rels = nil
	return m.Driver.Create(key, rls)
}

func (m *historyMemo) Update(key string, rls *release.Release) error {
	m.rels = nil
	return m.Driver.Update(key, rls)
}

func (m *historyMemo) Delete(key string) (*release.Release, error) {
	m.rels = nil
	return m.Driver.Delete(key)
}
