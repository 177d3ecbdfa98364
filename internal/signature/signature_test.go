package signature

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"maps"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

var key = NewKey([]byte("0123456789abcdef0123456789abcdef"))

const uid = types.UID("8d0f2a6e-0c3b-4a59-9d0e-1f2a3b4c5d6e")

// signed returns a revision rudder wrote for uid, its labels signed.
func signed() Revision {
	r := Revision{Namespace: "shop", Name: "webapp-front", Version: 2, Labels: map[string]string{
		"owner": "helm", "status": "deployed", LabelResource: string(uid), LabelContent: Content([]byte("kind: ConfigMap")),
		"rudder.dev/values-digest": "abc", "rudder.dev/holder": "rudder-1",
	}}
	r.Labels[Label] = key.Sign(r)
	return r
}

// legacy returns the label an earlier rudder signed revision 2 with.
func legacy(manifest string) string {
	mac := hmac.New(sha256.New, []byte("0123456789abcdef0123456789abcdef"))
	for _, f := range []string{"shop", "webapp-front", manifest} {
		_ = binary.Write(mac, binary.BigEndian, uint64(len(f)))
		mac.Write([]byte(f))
	}
	_ = binary.Write(mac, binary.BigEndian, int64(2))
	return hex.EncodeToString(mac.Sum(nil)[:16])
}

func TestKey_Verify(t *testing.T) {
	with := func(change func(*Revision)) Revision {
		r := signed()
		r.Labels = maps.Clone(r.Labels)
		change(&r)
		return r
	}
	tests := []struct {
		name     string
		rev      Revision
		resource types.UID
		want     Verdict
	}{
		{name: "signed for the resource", rev: signed(), resource: uid, want: Signed},
		{name: "Helm changed its status", rev: with(func(r *Revision) { r.Labels["status"] = "superseded" }), resource: uid, want: Signed},
		{name: "another label than rudder's added", rev: with(func(r *Revision) { r.Labels["team"] = "a" }), resource: uid, want: Signed},
		{name: "no signature", rev: with(func(r *Revision) { delete(r.Labels, Label) }), resource: uid, want: Unsigned},
		{name: "written for another resource of the name", rev: signed(), resource: "another-uid", want: Unsigned},
		{name: "resource label changed", rev: with(func(r *Revision) { r.Labels[LabelResource] = "another-uid" }), resource: "another-uid", want: Unsigned},
		{name: "content changed", rev: with(func(r *Revision) { r.Labels[LabelContent] = Content([]byte("kind: Role")) }), resource: uid, want: Unsigned},
		{name: "holder changed", rev: with(func(r *Revision) { r.Labels["rudder.dev/holder"] = "rudder-2" }), resource: uid, want: Unsigned},
		{name: "rudder label added", rev: with(func(r *Revision) { r.Labels["rudder.dev/uninstall-of"] = "2" }), resource: uid, want: Unsigned},
		{name: "rudder label removed", rev: with(func(r *Revision) { delete(r.Labels, "rudder.dev/values-digest") }), resource: uid, want: Unsigned},
		{name: "copied to a later revision", rev: with(func(r *Revision) { r.Version = 3 }), resource: uid, want: Unsigned},
		{name: "copied to another release", rev: with(func(r *Revision) { r.Name = "webapp-back" }), resource: uid, want: Unsigned},
		{name: "copied to another namespace", rev: with(func(r *Revision) { r.Namespace = "team-b" }), resource: uid, want: Unsigned},
		{name: "signed by another key", rev: with(func(r *Revision) {
			r.Labels[Label] = NewKey([]byte("another key, also 32 bytes long!")).Sign(*r)
		}), resource: uid, want: Unsigned},
		{name: "not hex", rev: with(func(r *Revision) { r.Labels[Label] = "v2-zz" }), resource: uid, want: Unsigned},
		{name: "an earlier rudder's signature", rev: with(func(r *Revision) { r.Labels[Label] = legacy("kind: ConfigMap") }), resource: uid, want: Legacy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := key.Verify(tt.rev, tt.resource); got != tt.want {
				t.Errorf("Verify = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestKey_VerifyLegacy(t *testing.T) {
	tests := []struct {
		name, manifest, label string
		want                  bool
	}{
		{name: "the manifest it signed", manifest: "kind: ConfigMap", label: legacy("kind: ConfigMap"), want: true},
		{name: "another manifest", manifest: "kind: Role", label: legacy("kind: ConfigMap"), want: false},
		{name: "not hex", manifest: "kind: ConfigMap", label: "zz", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := key.VerifyLegacy("shop", "webapp-front", 2, tt.manifest, tt.label); got != tt.want {
				t.Errorf("VerifyLegacy = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestKey_NilHoldsEverySigned(t *testing.T) {
	var k *Key
	if got := k.Verify(Revision{}, ""); got != Signed {
		t.Errorf("nil Key: Verify = %v, want Signed", got)
	}
	if k.Sign(signed()) != "" {
		t.Error("nil Key signed a revision")
	}
}

func TestContent(t *testing.T) {
	if Content([]byte("ab"), []byte("c")) == Content([]byte("a"), []byte("bc")) {
		t.Error("the parts' boundaries do not count")
	}
}
