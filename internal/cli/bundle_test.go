package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun_Bundle writes a bundle with `rudder bundle`, then checks it with --check, for the same release and
// for another.
func TestRun_Bundle(t *testing.T) {
	out := t.TempDir()
	sources := []string{"--config-dir", "../../config", "--readme", "../../README.md", "--output-dir", out}
	// The bundle holds each CRD, the CSV, the metrics reader role and metadata/annotations.yaml.
	crds, err := filepath.Glob("../../config/crd/bases/*.yaml")
	if err != nil || len(crds) == 0 {
		t.Fatalf("no CRDs in config/crd/bases (%v)", err)
	}
	tests := []struct {
		name    string
		args    []string
		want    string
		wantErr string
	}{
		{name: "write", args: sources, want: "wrote " + out + "/manifests/rudder.clusterserviceversion.yaml\n"},
		{name: "check the same release", args: append([]string{"--check"}, sources...), want: fmt.Sprintf("%d bundle file(s) in %s are up to date\n", len(crds)+3, out)},
		{
			name:    "check another release",
			args:    append([]string{"--check", "--version", "0.2.0"}, sources...),
			wantErr: "stale: " + out + "/manifests/rudder.clusterserviceversion.yaml",
		},
		{name: "an argument", args: append([]string{"extra"}, sources...), wantErr: `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, err := run(context.Background(), append([]string{"bundle"}, tt.args...)...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Run() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(stdout, tt.want) {
				t.Errorf("Run() printed %q, want it to contain %q", stdout, tt.want)
			}
		})
	}
}
