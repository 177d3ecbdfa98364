package volume

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/rudder-operator/rudder/internal/hook/hooktest"
)

// FuzzSizesOf feeds arbitrary specs to the hook's reading of spec.storageSize and spec.backup.storageSize.
// Besides what hooktest.ReadSpec checks of every hook, the sizes it gives are positive and equal to the
// quantities written, and the backup size is there exactly when spec.backup.storageSize is set.
func FuzzSizesOf(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"storageSize": "1Gi"}`,
		`{"storageSize": "1Gi", "backup": {"storageSize": "10Gi", "enabled": true}}`,
		`{"storageSize": "1.5Gi", "backup": {"storageSize": ""}}`,
		`{"storageSize": "500M", "backup": null}`,
		`{"storageSize": "1e3", "backup": {"storageSize": null}}`,
		`{"storageSize": "0"}`,
		`{"storageSize": "-1Gi"}`,
		`{"storageSize": "lots"}`,
		`{"storageSize": 10}`,
		`{"storageSize": "1Gi", "backup": "2Gi"}`,
		`{"storageSize": "1Gi", "backup": {"storageSize": 2}}`,
		`{"storageSize": "1Gi", "backup": {"storageSize": "9999999999999999999999Ei"}}`,
		`{"storageSize": "0.000000001m"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, ok := hooktest.ReadSpec(t, data, []string{"storageSize", "backup.storageSize"}, sizesOf)
		if !ok || r.Err != nil {
			return
		}
		checkSize(t, "storageSize", r.Values, &r.Got.data)
		if (hooktest.StringOr(r.Values, "backup.storageSize", "") != "") != (r.Got.backup != nil) {
			t.Errorf("backup size %v, though spec.backup.storageSize is %q", r.Got.backup,
				hooktest.StringOr(r.Values, "backup.storageSize", ""))
		}
		if r.Got.backup != nil {
			checkSize(t, "backup.storageSize", r.Values, r.Got.backup)
		}
	})
}

// checkSize checks that got is positive and equal to the quantity written at field in values.
func checkSize(t *testing.T, field string, values map[string]any, got *resource.Quantity) {
	t.Helper()
	written := hooktest.StringOr(values, field, "")
	want, err := resource.ParseQuantity(written)
	if err != nil || got.Sign() <= 0 || got.Cmp(want) != 0 {
		t.Errorf("spec.%s %q read as %s, want that positive quantity (%v)", field, written, got.String(), err)
	}
}
