package helm

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// LabelSignature is the label of the revisions rudder writes: a keyed digest
// of the revision's namespace, release name, number and manifest (signer).
// A revision without a valid one was written by someone else (the helm CLI,
// or a Secret forged to look like a revision): rudder reports it, but never
// applies its manifest with its own rights.
const LabelSignature = "rudder.dev/signature"

// ErrNotSigned is returned for an action that would apply the manifest of a
// revision rudder did not write (a rollback to it).
var ErrNotSigned = errors.New("revision not written by rudder")

// signer signs and verifies revisions with an HMAC-SHA256 key. The label
// holds the first 128 bits in hex, within a label value's 63 characters. A
// nil signer signs nothing and holds every revision as signed.
type signer struct {
	key []byte
}

// sum is the label value for rls.
func (s *signer) sum(rls *release.Release) string {
	mac := hmac.New(sha256.New, s.key)
	for _, field := range []string{rls.Namespace, rls.Name, rls.Manifest} {
		// Each field is prefixed with its length, so that no two different
		// revisions write the same bytes.
		_ = binary.Write(mac, binary.BigEndian, uint64(len(field)))
		mac.Write([]byte(field))
	}
	_ = binary.Write(mac, binary.BigEndian, int64(rls.Version))
	return hex.EncodeToString(mac.Sum(nil)[:16])
}

// verify reports whether rls carries its own valid signature.
func (s *signer) verify(rls *release.Release) bool {
	if s == nil {
		return true
	}
	got, err := hex.DecodeString(rls.Labels[LabelSignature])
	if err != nil {
		return false
	}
	want, _ := hex.DecodeString(s.sum(rls))
	return hmac.Equal(got, want)
}

// signing is a storage driver that signs every revision it creates. Helm
// creates a revision for an install or an upgrade, whose manifest rudder
// rendered, and for a rollback, whose target Client.Rollback verified first.
// Updates (a status, a label) keep the revision's labels as they were read:
// a revision signed stays signed, one that was not stays unsigned.
type signing struct {
	driver.Driver
	signer *signer
}

func (s signing) Create(key string, rls *release.Release) error {
	if s.signer != nil {
		labels := make(map[string]string, len(rls.Labels)+1)
		for k, v := range rls.Labels {
			labels[k] = v
		}
		labels[LabelSignature] = s.signer.sum(rls)
		rls.Labels = labels
	}
	return s.Driver.Create(key, rls)
}

// QueryLean answers a history query lean when the driver signed can
// (leanQuerier), and whole otherwise: without it, the interface signing
// embeds would hide the driver's QueryLean from leanHistory.
func (s signing) QueryLean(labels map[string]string) ([]*release.Release, error) {
	if q, ok := s.Driver.(leanQuerier); ok {
		return q.QueryLean(labels)
	}
	return s.Query(labels)
}
