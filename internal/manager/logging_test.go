package manager

import (
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
)

func TestWithoutBodies(t *testing.T) {
	var lines []string
	log := withoutBodies(funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 10}))
	log.WithName("client-go").WithValues("controller", "Database").V(9).Info("Request Body", "body", "password=hunter2")
	log.V(10).Info("Response Body", "body", "password=hunter2")
	log.Info("Helm install succeeded", "revision", 1)
	log.V(9).Info("Response Status", "status", "200 OK")
	if len(lines) != 2 {
		t.Fatalf("logged %d lines, want 2: %v", len(lines), lines)
	}
	for _, l := range lines {
		if strings.Contains(l, "hunter2") {
			t.Errorf("a body reached the log: %s", l)
		}
	}
}
