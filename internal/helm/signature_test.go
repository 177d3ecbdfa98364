package helm

import (
	"testing"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
)

func revision(version int, manifest string) *release.Release {
	return &release.Release{Name: "webapp-front", Namespace: "shop", Version: version, Manifest: manifest,
		Info: &release.Info{Status: release.StatusDeployed}}
}

func TestSigner_Verify(t *testing.T) {
	s := &signer{key: []byte("0123456789abcdef0123456789abcdef")}
	signed := func(r *release.Release) *release.Release {
		r.Labels = map[string]string{LabelSignature: s.sum(r)}
		return r
	}
	tests := []struct {
		name string
		rel  *release.Release
		want bool
	}{
		{name: "signed by the key", rel: signed(revision(2, "kind: ConfigMap")), want: true},
		{name: "no signature", rel: revision(2, "kind: ConfigMap"), want: false},
		{name: "manifest changed after signing", rel: func() *release.Release {
			r := signed(revision(2, "kind: ConfigMap"))
			r.Manifest = "kind: Role"
			return r
		}(), want: false},
		{name: "signature copied to a later revision", rel: func() *release.Release {
			r := signed(revision(2, "kind: ConfigMap"))
			r.Version = 3
			return r
		}(), want: false},
		{name: "signature copied to another namespace", rel: func() *release.Release {
			r := signed(revision(2, "kind: ConfigMap"))
			r.Namespace = "team-b"
			return r
		}(), want: false},
		{name: "signed by another key", rel: func() *release.Release {
			r := revision(2, "kind: ConfigMap")
			other := &signer{key: []byte("another key, also 32 bytes long!")}
			r.Labels = map[string]string{LabelSignature: other.sum(r)}
			return r
		}(), want: false},
		{name: "not hex", rel: func() *release.Release {
			r := revision(2, "kind: ConfigMap")
			r.Labels = map[string]string{LabelSignature: "zz"}
			return r
		}(), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.verify(tt.rel); got != tt.want {
				t.Errorf("verify = %v, want %v", got, tt.want)
			}
		})
	}
	if !(*signer)(nil).verify(revision(1, "")) {
		t.Error("a nil signer must hold every revision as signed")
	}
}

func TestSigning_Create(t *testing.T) {
	s := &signer{key: []byte("0123456789abcdef0123456789abcdef")}
	mem := driver.NewMemory()
	d := signing{Driver: mem, signer: s}
	rel := revision(1, "kind: ConfigMap")
	rel.Labels = map[string]string{LabelSignature: "forged", "team": "a"}
	if err := d.Create("sh.helm.release.v1.webapp-front.v1", rel); err != nil {
		t.Fatal(err)
	}
	got, err := mem.Get("sh.helm.release.v1.webapp-front.v1")
	if err != nil {
		t.Fatal(err)
	}
	if !s.verify(got) {
		t.Errorf("a created revision is not signed: labels %v", got.Labels)
	}
	if got.Labels["team"] != "a" {
		t.Errorf("the revision's own labels were lost: %v", got.Labels)
	}
	got.Manifest = "kind: Role"
	if err := d.Update("sh.helm.release.v1.webapp-front.v1", got); err != nil {
		t.Fatal(err)
	}
	if again, _ := mem.Get("sh.helm.release.v1.webapp-front.v1"); s.verify(again) {
		t.Error("an update re-signed a changed manifest: only creates sign")
	}
}
