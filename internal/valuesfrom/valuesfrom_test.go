package valuesfrom_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/rudder-operator/rudder/internal/valuesfrom"
)

const secretWord = "hunter2-do-not-print"

func objects() []client.Object {
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("uid-" + name), ResourceVersion: "7"}
	}
	return []client.Object{
		&corev1.ConfigMap{ObjectMeta: meta("shared"), Data: map[string]string{
			"values.yaml": "replicas: 3\nconfig:\n  MODE: shared\n  LEVEL: info\n",
			"other.yaml":  "config:\n  LEVEL: debug\n",
			"broken.yaml": "config: [unclosed\n",
		}},
		&corev1.Secret{ObjectMeta: meta("db"), Data: map[string][]byte{
			"password":    []byte(secretWord),
			"values.yaml": []byte("config:\n  DB_USER: app\n"),
			"broken.yaml": []byte("config: [" + secretWord + "\n"),
		}},
	}
}

func read(t *testing.T, sources ...valuesfrom.Source) (valuesfrom.Values, error) {
	t.Helper()
	reader := fake.NewClientBuilder().WithObjects(objects()...).Build()
	return valuesfrom.Read(context.Background(), reader, "shop", sources)
}

func TestRead_MergesInOrder(t *testing.T) {
	vals, err := read(t,
		valuesfrom.Source{Kind: "ConfigMap", Name: "shared"},
		valuesfrom.Source{Kind: "ConfigMap", Name: "shared", ValuesKey: "other.yaml"},
		valuesfrom.Source{Kind: "ConfigMap", Name: "missing", Optional: true},
	)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(vals.Merged)
	if want := `{"config":{"LEVEL":"debug","MODE":"shared"},"replicas":3}`; string(got) != want {
		t.Errorf("merged %s, want %s: later sources win key by key", got, want)
	}
	if vals.Shadow != nil {
		t.Errorf("shadow %v without a Secret, want nil", vals.Shadow)
	}
}

func TestRead_SecretsStayOutOfTheShadow(t *testing.T) {
	vals, err := read(t,
		valuesfrom.Source{Kind: "ConfigMap", Name: "shared"},
		valuesfrom.Source{Kind: "Secret", Name: "db", ValuesKey: "password", TargetPath: "config.DB_PASSWORD"},
		valuesfrom.Source{Kind: "Secret", Name: "db"},
	)
	if err != nil {
		t.Fatal(err)
	}
	cfg := vals.Merged["config"].(map[string]any)
	if cfg["DB_PASSWORD"] != secretWord || cfg["DB_USER"] != "app" || cfg["MODE"] != "shared" {
		t.Errorf("merged config %v, want the Secret's password at the target path and its values merged", cfg)
	}
	shadow, _ := json.Marshal(vals.Shadow)
	if strings.Contains(string(shadow), secretWord) || strings.Contains(string(shadow), `"app"`) {
		t.Errorf("shadow %s holds what the Secret holds", shadow)
	}
	if !strings.Contains(string(shadow), `"MODE":"shared"`) || !strings.Contains(string(shadow), "Secret db uid-db/7") {
		t.Errorf("shadow %s, want the ConfigMap's values as they are and the Secret's as its identity and version", shadow)
	}
	if got := strings.Join(vals.Secrets, ","); !strings.Contains(got, secretWord) || !strings.Contains(got, "app") || strings.Contains(got, "shared") {
		t.Errorf("secrets %q, want the Secret's values (to redact) and none of the ConfigMap's", vals.Secrets)
	}
}

func TestRead_Problems(t *testing.T) {
	tests := []struct {
		name   string
		source valuesfrom.Source
		want   []string
	}{
		{name: "missing object", source: valuesfrom.Source{Kind: "Secret", Name: "nope"},
			want: []string{"Secret nope has no key values.yaml", "create it, or mark the source optional"}},
		{name: "missing key", source: valuesfrom.Source{Kind: "ConfigMap", Name: "shared", ValuesKey: "nope"},
			want: []string{"ConfigMap shared has no key nope"}},
		{name: "ConfigMap content not values", source: valuesfrom.Source{Kind: "ConfigMap", Name: "shared", ValuesKey: "broken.yaml"},
			want: []string{"ConfigMap shared (key broken.yaml) is not a YAML mapping of values (", "set targetPath"}},
		{name: "Secret content not values: nothing of it in the error", source: valuesfrom.Source{Kind: "Secret", Name: "db", ValuesKey: "broken.yaml"},
			want: []string{"Secret db (key broken.yaml) is not a YAML mapping of values; fix the key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := read(t, tt.source)
			if err == nil || !valuesfrom.Fixable(err) {
				t.Fatalf("Read = %v, want a problem of the source", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), secretWord) {
				t.Errorf("error %q shows what the Secret holds", err)
			}
		})
	}
}

func TestSources(t *testing.T) {
	kind := []valuesfrom.Source{{Kind: "ConfigMap", Name: "defaults"}}
	got, err := valuesfrom.Sources(kind, map[string]string{valuesfrom.Annotation: "- {kind: Secret, name: db, valuesKey: password, targetPath: config.PW, optional: true}\n"})
	if err != nil || len(got) != 2 || got[0].Name != "defaults" || got[1].TargetPath != "config.PW" || !got[1].Optional {
		t.Fatalf("Sources = %+v, %v; want the kind's, then the annotation's", got, err)
	}
	for value, want := range map[string]string{
		"kind: Secret":                                  "want a YAML list of sources",
		"- {kind: secret, name: db}":                    `[0].kind: "secret" is neither ConfigMap nor Secret`,
		"- {kind: Secret}":                              "[0].name: empty; name the Secret",
		"- {kind: Secret, name: db, key: x}":            `unknown field "key"`,
		"- {kind: Secret, name: db, targetPath: 'a[x'}": "[0].targetPath",
	} {
		_, err := valuesfrom.Sources(nil, map[string]string{valuesfrom.Annotation: value})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), valuesfrom.Annotation) {
			t.Errorf("Sources(%q) = %v, want an error naming the annotation and %q", value, err, want)
		}
		if valuesfrom.Fixable(err) {
			t.Errorf("Sources(%q): a malformed annotation is not a missing source", value)
		}
	}
}
