package signature

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// Labels of a signed revision's storage Secret.
const (
	// Label holds the signature: "v2-" and the first 128 bits of the HMAC, in
	// hex, within a label value's 63 characters.
	Label = "rudder.dev/signature"
	// LabelContent holds Content of what the revision applies and records:
	// its manifest, hooks, values and chart. The signature covers it, and
	// whoever decodes the revision checks it.
	LabelContent = "rudder.dev/content"
	// LabelResource holds the UID of the custom resource the revision was
	// written for: a revision of an earlier resource of the same name is no
	// evidence for a later one.
	LabelResource = "rudder.dev/resource"
)

// prefix is what a signature of this format starts with. A signature without
// it is Legacy: 32 hex digits over the namespace, name, manifest and number,
// as rudder wrote them before the revision's labels were signed.
const prefix = "v2-"

// labelPrefix is the prefix of the labels a signature covers: rudder's. Helm's
// own labels (owner, name, status, version, createdAt, modifiedAt) are not
// covered: Helm changes a revision's status without rudder, as does the helm
// CLI when it upgrades past a revision rudder wrote.
const labelPrefix = "rudder.dev/"

// Verdict is what a revision's labels say of who wrote it.
type Verdict int

const (
	// Unsigned means no valid signature: someone else wrote the revision, or
	// changed what rudder signed: its manifest is never applied, nor its
	// labels believed.
	Unsigned Verdict = iota
	// Signed means rudder wrote it, for the resource verified against.
	Signed
	// Legacy means it carries the signature of a rudder that signed only the
	// manifest (VerifyLegacy tells, with the manifest).
	Legacy
)

// Key signs and verifies revisions. A nil *Key signs nothing and holds every
// revision Signed: what a program without rudder's key, such as the command
// line's history, needs.
type Key struct {
	secret []byte
}

// NewKey returns a Key over secret, 32 random bytes.
func NewKey(secret []byte) *Key {
	return &Key{secret: slices.Clone(secret)}
}

// Revision is what a signature covers: where the revision is stored, its
// number, and rudder's labels on it (every label under rudder.dev/ but Label
// itself; others in the map are ignored).
type Revision struct {
	Namespace, Name string
	Version         int
	Labels          map[string]string
}

// Sign returns the value of Label for r.
func (k *Key) Sign(r Revision) string {
	if k == nil {
		return ""
	}
	return prefix + hex.EncodeToString(k.sum(r))
}

func (k *Key) sum(r Revision) []byte {
	mac := hmac.New(sha256.New, k.secret)
	field(mac, "rudder revision v2")
	field(mac, r.Namespace)
	field(mac, r.Name)
	_ = binary.Write(mac, binary.BigEndian, int64(r.Version))
	keys := make([]string, 0, len(r.Labels))
	for k := range r.Labels {
		if strings.HasPrefix(k, labelPrefix) && k != Label {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		field(mac, k)
		field(mac, r.Labels[k])
	}
	return mac.Sum(nil)[:16]
}

// field writes s to h prefixed with its length, so that no two sequences of
// fields write the same bytes.
func field[T string | []byte](h hash.Hash, s T) {
	_ = binary.Write(h, binary.BigEndian, uint64(len(s)))
	h.Write([]byte(s))
}

// Verify says whether rudder signed r for the custom resource of UID
// resource: a valid signature, made for that resource. A Legacy signature
// names no resource: VerifyLegacy checks it.
func (k *Key) Verify(r Revision, resource types.UID) Verdict {
	if k == nil {
		return Signed
	}
	v := r.Labels[Label]
	got, ok := strings.CutPrefix(v, prefix)
	if !ok {
		if isLegacy(v) {
			return Legacy
		}
		return Unsigned
	}
	sum, err := hex.DecodeString(got)
	if err != nil || !hmac.Equal(sum, k.sum(r)) || r.Labels[LabelResource] != string(resource) {
		return Unsigned
	}
	return Signed
}

// isLegacy reports whether v has the form of a Legacy signature.
func isLegacy(v string) bool {
	if len(v) != 32 {
		return false
	}
	_, err := hex.DecodeString(v)
	return err == nil
}

// VerifyLegacy reports whether label is a valid Legacy signature of revision
// version of release name in namespace with manifest. Such a revision was
// written by rudder before revisions named their resource: a tenant could no
// more forge it then than now.
func (k *Key) VerifyLegacy(namespace, name string, version int, manifest, label string) bool {
	if k == nil {
		return true
	}
	got, err := hex.DecodeString(label)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, k.secret)
	for _, f := range []string{namespace, name, manifest} {
		field(mac, f)
	}
	_ = binary.Write(mac, binary.BigEndian, int64(version))
	return hmac.Equal(got, mac.Sum(nil)[:16])
}

// Content returns the value of LabelContent for the parts of a revision
// (its manifest, hooks, values and chart, each encoded by the caller the same
// way every time): the first 128 bits of their SHA-256, in hex.
func Content(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		field(h, p)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
