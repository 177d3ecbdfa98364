package redact_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/rudder-operator/rudder/internal/redact"
)

func TestRedactor_String(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		in     string
		want   string
	}{
		{name: "plain", values: []string{"hunter2-secret"},
			in: "at '/replicas': got string hunter2-secret, want integer", want: "at '/replicas': got string [redacted], want integer"},
		{name: "every occurrence", values: []string{"s3cr3t"},
			in: "s3cr3t and s3cr3t", want: "[redacted] and [redacted]"},
		{name: "JSON-quoted, with a quote and a backslash", values: []string{`pa"ss\word`},
			in: `value "pa\"ss\\word" is invalid`, want: `value "[redacted]" is invalid`},
		{name: "JSON-quoted as encoding/json escapes HTML", values: []string{"a<b>&c"},
			in: `{"env":"a\u003cb\u003e\u0026c"}`, want: `{"env":"[redacted]"}`},
		{name: "YAML single-quoted", values: []string{"it's-secret"},
			in: "value: 'it''s-secret'", want: "value: '[redacted]'"},
		{name: "base64, as a Secret's data holds it", values: []string{"hunter2-secret"},
			in: "data.password: aHVudGVyMi1zZWNyZXQ= is too long", want: "data.password: [redacted] is too long"},
		{name: "multi-line value, escaped", values: []string{"line-one\nline-two"},
			in: `got "line-one\nline-two"`, want: `got "[redacted]"`},
		{name: "multi-line value, one line quoted", values: []string{"-----BEGIN KEY-----\nMIIEvQIBADANBg\n-----END KEY-----"},
			in: "cannot parse MIIEvQIBADANBg at line 2", want: "cannot parse [redacted] at line 2"},
		{name: "overlapping values leave no part of either", values: []string{"abcXYZ", "XYZdef"},
			in: "got abcXYZdef!", want: "got [redacted]!"},
		{name: "one value inside another", values: []string{"secret", "my-secret-value"},
			in: "my-secret-value, secret", want: "[redacted], [redacted]"},
		{name: "values shorter than MinLength are not looked for", values: []string{"a", "yes", "10"},
			in: "a value of 10: yes", want: "a value of 10: yes"},
		{name: "no value: unchanged", in: "plain message", want: "plain message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := redact.New(tt.values...).String(tt.in); got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRedactor_Error(t *testing.T) {
	secret := "hunter2-secret"
	apiErr := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web",
		nil)
	apiErr.ErrStatus.Message = fmt.Sprintf(`Deployment "web" is invalid: env[0].value: Invalid value: %q`, secret)
	wrapped := fmt.Errorf("upgrading release webapp-web: %w", apiErr)

	r := redact.New(secret)
	got := r.Error(wrapped)
	if strings.Contains(got.Error(), secret) {
		t.Errorf("message %q holds the value", got.Error())
	}
	if !strings.Contains(got.Error(), "env[0].value: Invalid value: \"[redacted]\"") {
		t.Errorf("message %q, want the rest of it kept", got.Error())
	}
	if !apierrors.IsInvalid(got) || !errors.Is(got, apiErr) {
		t.Error("the redacted error no longer unwraps to the API server's")
	}
	if plain := r.Error(errors.New("nothing secret")); errors.Unwrap(plain) != nil {
		t.Error("an error without a value was wrapped")
	}
	var none *redact.Redactor
	if got := none.Error(wrapped); got.Error() != wrapped.Error() || none.String("x") != "x" {
		t.Error("a nil Redactor changed something")
	}
	if r.Error(nil) != nil {
		t.Error("Error(nil) != nil")
	}
}
