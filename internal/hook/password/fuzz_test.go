package password

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rudder-operator/rudder/internal/hook/hooktest"
)

// FuzzCredentialsOf feeds arbitrary specs to the hook's reading of spec.credentials and spec.database. Besides
// what hooktest.ReadSpec checks of every hook, the settings it gives are the values as written, or the
// defaults where they are unset or empty.
func FuzzCredentialsOf(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"credentials": {"secretName": "mine", "usernameKey": "user", "passwordKey": "pw"}, "database": "shop"}`,
		`{"credentials": {"secretName": "", "usernameKey": null}, "database": ""}`,
		`{"credentials": null}`,
		`{"credentials": "mine"}`,
		`{"credentials": [1, 2]}`,
		`{"credentials": {"secretName": 5}}`,
		`{"credentials": {"passwordKey": true}}`,
		`{"credentials": {"usernameKey": {"a": "b"}}}`,
		`{"database": 1.5}`,
		`{"version": "16", "storageSize": "1Gi", "database": "shop", "backup": {"enabled": true}}`,
	} {
		f.Add([]byte(seed))
	}
	fields := []string{"credentials.secretName", "credentials.usernameKey", "credentials.passwordKey", "database"}
	obj := &unstructured.Unstructured{}
	obj.SetName("orders")
	f.Fuzz(func(t *testing.T, data []byte) {
		r, ok := hooktest.ReadSpec(t, data, fields, func(values map[string]any) (credentials, error) {
			return credentialsOf(obj, values)
		})
		if !ok || r.Err != nil {
			return
		}
		want := credentials{
			secretName:  hooktest.StringOr(r.Values, "credentials.secretName", "orders-credentials"),
			usernameKey: hooktest.StringOr(r.Values, "credentials.usernameKey", "username"),
			passwordKey: hooktest.StringOr(r.Values, "credentials.passwordKey", "password"),
			database:    hooktest.StringOr(r.Values, "database", "orders"),
		}
		if r.Got != want {
			t.Errorf("credentials %+v, want %+v", r.Got, want)
		}
	})
}
