package version

import (
	"testing"

	"github.com/rudder-operator/rudder/internal/hook/hooktest"
)

// FuzzWantedVersion feeds arbitrary specs to the hook's reading of spec.version. Besides what
// hooktest.ReadSpec checks of every hook, the version it gives is the one written, or "" when unset.
func FuzzWantedVersion(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"version": "16"}`,
		`{"version": "16.4", "storageSize": "1Gi"}`,
		`{"version": ""}`,
		`{"version": null}`,
		`{"version": 16}`,
		`{"version": 16.4}`,
		`{"version": true}`,
		`{"version": ["16"]}`,
		`{"version": {"major": 16}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, ok := hooktest.ReadSpec(t, data, []string{"version"}, wantedVersion)
		if !ok || r.Err != nil {
			return
		}
		if want := hooktest.StringOr(r.Values, "version", ""); r.Got != want {
			t.Errorf("version %q, want %q", r.Got, want)
		}
	})
}
