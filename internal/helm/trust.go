package helm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	ri "helm.sh/helm/v4/pkg/release"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rudder-operator/rudder/internal/signature"
)

// ErrNotSigned is returned for a revision rudder did not write for the
// resource: an action that would rest on it (a rollback to it) is refused.
var ErrNotSigned = errors.New("revision not written by rudder")

// trusted is the storage driver every Helm action of a Client goes through.
// It signs the revisions it writes for the Client's resource, and shows Helm
// only the stored revisions signed for that resource, as if no other were
// stored: a revision written by the helm CLI, by a rudder for an earlier
// resource of the same name, or forged by whoever may create Secrets is
// never the base of an upgrade (whose manifest Helm takes as proof that it
// owns the objects listed), a lock (a pending revision), a rollback target,
// nor what an uninstall deletes. New revisions are numbered past every stored
// one, hidden or not.
//
// A revision is signed when created (every revision Helm creates is rendered
// by rudder, or a rollback to a signed one), and signed again when updated
// after it was read signed (Helm marks it superseded or failed, rudder
// labels it). An update of a revision not read signed leaves it unsigned.
type trusted struct {
	driver.Driver
	key      *signature.Key
	resource types.UID // the custom resource whose revisions are trusted
	// newestStored tells the highest revision number stored of a release,
	// whether its Secret decodes or not.
	newestStored func(name string) (int, error)

	mu        sync.Mutex
	signed    map[string]bool             // keys read or written signed
	manifests map[string]bool             // the manifests of the signed revisions read
	stored    map[string]map[int]bool     // by release name: the numbers seen stored, each true when signed
	deployed  map[string]*release.Release // by key: the revisions hidden while deployed
}

func newTrusted(d driver.Driver, key *signature.Key, resource types.UID, newestStored func(string) (int, error)) *trusted {
	return &trusted{Driver: d, key: key, resource: resource, newestStored: newestStored, signed: map[string]bool{}, manifests: map[string]bool{},
		stored: map[string]map[int]bool{}, deployed: map[string]*release.Release{}}
}

// signedManifest reports whether manifest is that of a revision read signed.
func (t *trusted) signedManifest(manifest string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.manifests[manifest]
}

// verdict says whether rls, as stored, was written by rudder for the
// resource: its signature and the content it signs, or an earlier rudder's
// signature over its manifest.
func verdict(key *signature.Key, resource types.UID, rls *release.Release) bool {
	if key == nil {
		return true
	}
	r := signature.Revision{Namespace: rls.Namespace, Name: rls.Name, Version: rls.Version, Labels: rls.Labels}
	switch key.Verify(r, resource) {
	case signature.Signed:
		return rls.Labels[signature.LabelContent] == contentOf(rls)

	case signature.Legacy:
		return key.VerifyLegacy(rls.Namespace, rls.Name, rls.Version, rls.Manifest, rls.Labels[signature.Label])
	}
	return false
}

// keep returns the revisions of rels signed for the resource, and records
// what it saw.
func (t *trusted) keep(rels []ri.Releaser) []ri.Releaser {
	out := rels[:0:0]
	for _, r := range rels {
		if rls, err := v1(r); err == nil && rls != nil && t.check(rls) {
			out = append(out, rls)
		}
	}
	return out
}

// check reports whether rls is signed for the resource, recording its number
// and, when signed, its key.
func (t *trusted) check(rls *release.Release) bool {
	ok := verdict(t.key, t.resource, rls)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.saw(rls.Name, rls.Version, ok)
	switch {
	case ok:
		t.signed[makeKey(rls.Name, rls.Version)] = true
		t.manifests[rls.Manifest] = true
	case rls.Info != nil && rls.Info.Status == rcommon.StatusDeployed:
		t.deployed[makeKey(rls.Name, rls.Version)] = rls
	}
	return ok
}

// Get reads revision key, naming a storage Secret that does not decode
// (ErrUndecodable), and refuses one not signed for the resource.
func (t *trusted) Get(key string) (ri.Releaser, error) {
	rls, err := get(t.Driver, key)
	if err != nil {
		return nil, err
	}
	if !t.check(rls) {
		return nil, fmt.Errorf("%w: %s", ErrNotSigned, key)
	}
	return rls, nil
}

func (t *trusted) List(filter func(ri.Releaser) bool) ([]ri.Releaser, error) {
	rels, err := t.Driver.List(filter)
	return t.keep(rels), err
}

func (t *trusted) Query(labels map[string]string) ([]ri.Releaser, error) {
	rels, err := t.Driver.Query(labels)
	if err != nil {
		return nil, err
	}
	return t.found(t.keep(rels))
}

// found answers a query whose signed revisions are rels, as the Secrets
// driver answers one that matches none.
func (t *trusted) found(rels []ri.Releaser) ([]ri.Releaser, error) {
	if len(rels) == 0 {
		return nil, driver.ErrReleaseNotFound
	}
	return rels, nil
}

// next returns the number Create gives the next revision of release name.
func (t *trusted) next(name string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	all, _ := t.newest(name)
	return all + 1
}

// saw records that revision version of release name is stored, signed or
// not. The caller holds t.mu.
func (t *trusted) saw(name string, version int, signed bool) {
	if t.stored[name] == nil {
		t.stored[name] = map[int]bool{}
	}
	t.stored[name][version] = signed
}

// newest returns the highest number seen stored of release name, and the
// highest of those not signed. The caller holds t.mu.
func (t *trusted) newest(name string) (all, hidden int) {
	for v, signed := range t.stored[name] {
		all = max(all, v)
		if !signed {
			hidden = max(hidden, v)
		}
	}
	return all, hidden
}

// Delete deletes the stored revision key, which then numbers nothing. A
// revision already gone counts as deleted: a namespace being deleted takes
// the Secrets along, and the uninstall of a release there must not fail for
// it.
func (t *trusted) Delete(key string) (ri.Releaser, error) {
	rls, err := t.Driver.Delete(key)
	// Helm's driver reads the revision first, so the Secret may go between
	// its read (ErrReleaseNotFound) and its delete (the API server's NotFound).
	if err == nil || errors.Is(err, driver.ErrReleaseNotFound) || apierrors.IsNotFound(err) {
		t.forget(key)
		return rls, nil
	}
	return rls, err
}

// forget records that the revision stored under key is gone.
func (t *trusted) forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.signed, key)
	delete(t.deployed, key)
	for name, versions := range t.stored {
		for v := range versions {
			if makeKey(name, v) == key {
				delete(versions, v)
			}
		}
	}
}

// Create signs rls and stores it. Helm numbers it past the signed revisions
// it sees; when a hidden one (not signed for the resource, or undecodable) is
// stored at that number or past it, rls is numbered past every stored one.
// A number taken by a signed revision is another writer's: ErrReleaseExists,
// as Helm's driver says.
func (t *trusted) Create(_ string, r ri.Releaser) error {
	rls, err := v1(r)
	if err != nil {
		return err
	}
	t.mu.Lock()
	if all, hidden := t.newest(rls.Name); rls.Version <= hidden {
		rls.Version = all + 1
	}
	t.mu.Unlock()
	for tries := 0; ; tries++ {
		key := makeKey(rls.Name, rls.Version)
		t.sign(rls)
		err := t.Driver.Create(key, rls)
		if err == nil {
			break
		}
		if !errors.Is(err, driver.ErrReleaseExists) || tries == 3 {
			return err
		}
		if _, err := t.Get(key); !errors.Is(err, ErrNotSigned) && !errors.Is(err, ErrUndecodable) {
			return fmt.Errorf("%w: %s", driver.ErrReleaseExists, key)
		}
		n := rls.Version
		if t.newestStored != nil {
			if newest, err := t.newestStored(rls.Name); err == nil {
				n = max(n, newest)
			}
		}
		rls.Version = n + 1
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.signed[makeKey(rls.Name, rls.Version)] = true
	t.saw(rls.Name, rls.Version, true)
	return nil
}

// Update stores rls, signed again when it was read or written signed. When
// a signed revision becomes deployed, a hidden revision still deployed before
// it (another Helm client's) is marked superseded, as Helm marks the one it
// upgraded from: one revision serves. Its content stays as it was, unsigned.
func (t *trusted) Update(key string, r ri.Releaser) error {
	rls, err := v1(r)
	if err != nil {
		return err
	}
	t.mu.Lock()
	signed := t.signed[key]
	t.mu.Unlock()
	if !signed {
		return t.Driver.Update(key, rls)
	}
	t.sign(rls)
	if err := t.Driver.Update(key, rls); err != nil {
		return err
	}
	if rls.Info != nil && rls.Info.Status == rcommon.StatusDeployed {
		t.supersede(rls)
	}
	return nil
}

// supersede marks superseded the hidden revisions of rls's release deployed
// before it. Best effort: a revision left deployed only shows twice in
// `helm history`.
func (t *trusted) supersede(rls *release.Release) {
	t.mu.Lock()
	var older []*release.Release
	for k, h := range t.deployed {
		if h.Name == rls.Name && h.Version < rls.Version {
			older = append(older, h)
			delete(t.deployed, k)
		}
	}
	t.mu.Unlock()
	for _, h := range older {
		h.SetStatus(rcommon.StatusSuperseded, h.Info.Description)
		_ = t.Driver.Update(makeKey(h.Name, h.Version), h)
	}
}

// sign signs rls for the Driver's resource.
func (t *trusted) sign(rls *release.Release) {
	Sign(t.key, t.resource, rls)
}

// Sign sets the labels of rls that name the custom resource it is written
// for (UID resource), digest its content and sign both with key, as rudder
// signs every revision it writes. A nil key signs nothing. Tests that stand
// in for a rudder process killed mid-operation sign what they store with it.
func Sign(key *signature.Key, resource types.UID, rls *release.Release) {
	if key == nil {
		return
	}
	labels := make(map[string]string, len(rls.Labels)+3)
	for k, v := range rls.Labels {
		labels[k] = v
	}
	labels[signature.LabelResource] = string(resource)
	labels[signature.LabelContent] = contentOf(rls)
	labels[signature.Label] = key.Sign(signature.Revision{Namespace: rls.Namespace, Name: rls.Name, Version: rls.Version, Labels: labels})
	rls.Labels = labels
}

// contentOf is the digest of what rls applies and records, as a decoded
// revision holds it: its manifest, its hooks (but for their last run, which
// a test run records), its values and its chart.
func contentOf(rls *release.Release) string {
	parts := [][]byte{[]byte(rls.Manifest), canonical(rls.Config), []byte(strconv.Itoa(len(rls.Hooks)))}
	for _, h := range rls.Hooks {
		if h == nil {
			continue
		}
		parts = append(parts, hookContent(h))
	}
	if c := rls.Chart; c != nil {
		parts = append(parts, canonical(c.Metadata), canonical(c.Values), c.Schema, []byte(strconv.Itoa(len(c.Templates))))
		for _, f := range c.Templates {
			parts = append(parts, []byte(f.Name), f.Data)
		}
		for _, f := range c.Files {
			parts = append(parts, []byte(f.Name), f.Data)
		}
	}
	return signature.Content(parts...)
}

// unrun is how Helm 3 encoded a hook's last run before any: what rudder has
// always digested in its place, so that the revisions rudder wrote on Helm 3
// verify on Helm 4, which encodes it {"phase":""}.
var unrun = map[string]any{"completed_at": "", "phase": "", "started_at": ""}

// hookContent is h as contentOf digests it: canonical, its last run as
// none.
func hookContent(h *release.Hook) []byte {
	var m map[string]any
	if err := json.Unmarshal(canonical(h), &m); err != nil || m == nil {
		return nil
	}
	m["last_run"] = unrun
	b, _ := json.Marshal(m)
	return b
}

// canonical is v as JSON, decoded and encoded again: as a stored revision
// decodes it (numbers as float64, empty fields of omitempty left out), so
// that what is signed before storing digests the same after reading.
func canonical(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var decoded any
	if err := json.Unmarshal(b, &decoded); err != nil {
		return nil
	}
	b, _ = json.Marshal(decoded)
	return b
}

// makeKey is Helm's storage key of revision version of release name.
func makeKey(name string, version int) string {
	return fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, version)
}
