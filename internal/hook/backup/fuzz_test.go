package backup

import (
	"math"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rudder-operator/rudder/internal/hook/hooktest"
)

// specSeeds are Database specs for the fuzz targets of both hooks of the package.
var specSeeds = []string{
	`{}`,
	`{"version": "16", "database": "shop", "storageSize": "1Gi", "storageClass": "fast",
	  "credentials": {"secretName": "orders-credentials", "usernameKey": "username", "passwordKey": "password"},
	  "backup": {"enabled": true, "schedule": "0 2 * * *", "storageSize": "2Gi", "retention": 3},
	  "restore": {"from": "old", "backup": "old-20240101T000000Z.dump"}}`,
	`{"backup": {"enabled": false, "schedule": "", "storageSize": "", "retention": null}, "restore": {"from": ""}}`,
	`{"backup": {"retention": 0}}`,
	`{"backup": {"retention": 2147483648}}`,
	`{"backup": {"retention": 2.5}}`,
	`{"backup": {"retention": 1e2}}`,
	`{"backup": {"retention": "7"}}`,
	`{"backup": {"enabled": "true"}}`,
	`{"backup": {"storageSize": "-1Gi"}}`,
	`{"backup": {"storageSize": "ten"}}`,
	`{"backup": {"storageSize": 10}}`,
	`{"backup": true}`,
	`{"credentials": ["a"]}`,
	`{"version": 16}`,
	`{"restore": "old"}`,
	`{"restore": {"from": 1}}`,
	`{"restore": {"from": "old", "backup": false}}`,
	`{"restore": {"backup": "latest"}}`,
}

// FuzzSpecOf feeds arbitrary specs to the backup hook's reading of a Database. Besides what
// hooktest.ReadSpec checks of every hook, the settings it gives are the values as written, or the chart's
// defaults where they are unset or empty.
func FuzzSpecOf(f *testing.F) {
	for _, seed := range specSeeds {
		f.Add([]byte(seed))
	}
	fields := []string{"version", "database", "storageClass", "credentials.secretName", "credentials.usernameKey",
		"credentials.passwordKey", "backup.enabled", "backup.schedule", "backup.storageSize", "backup.retention"}
	obj := &unstructured.Unstructured{}
	obj.SetName("orders")
	obj.SetNamespace("shop")
	type settings struct {
		spec    spec
		enabled bool
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, ok := hooktest.ReadSpec(t, data, fields, func(values map[string]any) (settings, error) {
			s, enabled, err := specOf(obj, values)
			return settings{s, enabled}, err
		})
		if !ok || r.Err != nil {
			return
		}
		v := r.Values
		want := spec{
			name: "orders", namespace: "shop",
			version:      hooktest.StringOr(v, "version", ""),
			database:     hooktest.StringOr(v, "database", ""),
			storageClass: hooktest.StringOr(v, "storageClass", ""),
			secretName:   hooktest.StringOr(v, "credentials.secretName", ""),
			usernameKey:  hooktest.StringOr(v, "credentials.usernameKey", ""),
			passwordKey:  hooktest.StringOr(v, "credentials.passwordKey", ""),
			schedule:     hooktest.StringOr(v, "backup.schedule", defaultSchedule),
			storageSize:  r.Got.spec.storageSize, // checked below
			retention:    defaultRetention,
		}
		switch n, _ := hooktest.At(v, "backup.retention"); n := n.(type) {
		case int64:
			want.retention = n
		case float64:
			if want.retention = int64(n); n != math.Trunc(n) {
				t.Errorf("spec.backup.retention %v, a fraction, read without error", n)
			}
		}
		if r.Got.spec.retention < 1 || r.Got.spec.retention > math.MaxInt32 {
			t.Errorf("retention %d, out of range", r.Got.spec.retention)
		}
		if r.Got.spec != want {
			t.Errorf("spec %+v, want %+v", r.Got.spec, want)
		}
		size, err := resource.ParseQuantity(hooktest.StringOr(v, "backup.storageSize", defaultStorageSize))
		if err != nil || r.Got.spec.storageSize.Sign() <= 0 || r.Got.spec.storageSize.Cmp(size) != 0 {
			t.Errorf("backup size %s, want %s, positive (%v)", r.Got.spec.storageSize.String(), size.String(), err)
		}
		if enabled, _ := hooktest.At(v, "backup.enabled"); r.Got.enabled != (enabled == true) {
			t.Errorf("enabled %v, though spec.backup.enabled is %v", r.Got.enabled, enabled)
		}
	})
}

// FuzzRestoreRequestOf feeds arbitrary specs to the restore hook's reading of spec.restore. Besides what
// hooktest.ReadSpec checks of every hook, a restore is requested exactly when spec.restore.from is set and not
// empty, of the backup written or "latest".
func FuzzRestoreRequestOf(f *testing.F) {
	for _, seed := range specSeeds {
		f.Add([]byte(seed))
	}
	type settings struct {
		req       restoreRequest
		requested bool
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, ok := hooktest.ReadSpec(t, data, []string{"restore.from", "restore.backup"}, func(values map[string]any) (settings, error) {
			req, requested, err := restoreRequestOf(values)
			return settings{req, requested}, err
		})
		if !ok || r.Err != nil {
			return
		}
		from := hooktest.StringOr(r.Values, "restore.from", "")
		want := settings{req: restoreRequest{from: from, backup: hooktest.StringOr(r.Values, "restore.backup", "latest")},
			requested: from != ""}
		if r.Got != want {
			t.Errorf("restore %+v, want %+v", r.Got, want)
		}
	})
}
