package reconcile

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

	"github.com/rudder-operator/rudder/internal/redact"
)

func TestRedactingSink(t *testing.T) {
	var lines []string
	base := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{LogCaller: funcr.All})
	var red *redact.Redactor // known only once the values are read
	log := logr.New(newRedactingSink(base.GetSink(), func() *redact.Redactor { return red })).WithName("webapp")
	log.Info("Before the values are read", "value", "hunter2-secret")
	red = redact.New("hunter2-secret")
	log.WithValues("early", "hunter2-secret").Info("Read hunter2-secret", "value", "hunter2-secret", "count", 3)
	log.Error(errors.New(`invalid value "hunter2-secret"`), "Helm Install failed")

	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3: %q", len(lines), lines)
	}
	if !strings.Contains(lines[0], "hunter2-secret") {
		t.Errorf("line %s: redacted before the values were known", lines[0])
	}
	for _, l := range lines[1:] {
		if strings.Contains(l, "hunter2") {
			t.Errorf("line %s shows the value", l)
		}
		if !strings.Contains(l, "[redacted]") {
			t.Errorf("line %s, want [redacted] in it", l)
		}
	}
	for _, l := range lines {
		if !strings.Contains(l, `"file"="redactsink_test.go"`) {
			t.Errorf("line %s names another caller than the test", l)
		}
	}
}
