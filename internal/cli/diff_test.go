package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/test/testenv"
)

// TestRun_Diff checks rudder diff's exit status, as kubectl diff's: 0 for no
// difference, 1 for differences, 2 for an error.
func TestRun_Diff(t *testing.T) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cli-diff-"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	manifest := func(image string) string {
		return "apiVersion: webapp.my.domain/v1\nkind: WebApp\nmetadata: {name: shop, namespace: " + ns.Name + "}\n" +
			"spec: {image: \"" + image + "\", port: 80, replicas: 1}\n"
	}
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	same, changed := file("same.yaml", manifest("nginx:1.25")), file("changed.yaml", manifest("nginx:1.26"))
	app := testenv.NewObject(webAppGVK, ns.Name, "shop", map[string]any{"image": "nginx:1.25", "port": int64(80), "replicas": int64(1)})
	if err := k8s.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "revision 1", func() bool {
		return testenv.RevisionsAre(ctx, k8s, ns.Name, "webapp-shop", "1:deployed") == nil
	})

	tests := []struct {
		name     string
		args     []string
		wantCode int // 0: no error
		wantOut  string
		wantErr  string
	}{
		{name: "unchanged", args: []string{"-f", same}},
		{name: "changed", args: []string{"-f", changed}, wantCode: 1, wantOut: "would be upgraded from revision 1 to 2"},
		{name: "changed, as json", args: []string{"-f", changed, "-o", "json"}, wantCode: 1, wantOut: `"action": "upgrade"`},
		{name: "no file", args: nil, wantCode: 2, wantErr: "flag -f"},
		{name: "a missing file", args: []string{"-f", filepath.Join(dir, "none.yaml")}, wantCode: 2, wantErr: "none.yaml"},
		{name: "an empty file", args: []string{"-f", file("empty.yaml", "---\n")}, wantCode: 2, wantErr: "holds no resource"},
		{name: "an unknown output", args: []string{"-f", same, "-o", "wide"}, wantCode: 2, wantErr: `"wide" is not an output format`},
		{name: "a kind rudder does not serve", args: []string{"-f", file("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")},
			wantCode: 2, wantErr: "not a kind rudder serves"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := runFull(ctx, "rudder", append([]string{"diff"}, tt.args...)...)
			code := 0
			var exit *ExitError
			if errors.As(err, &exit) {
				code = exit.Code
			} else if err != nil {
				t.Fatalf("Run() error %v is not an *ExitError", err)
			}
			if code != tt.wantCode || !strings.Contains(out, tt.wantOut) || tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("rudder diff %v: exit %d, error %v, printed:\n%s\nwant exit %d, output containing %q, error containing %q",
					tt.args, code, err, out, tt.wantCode, tt.wantOut, tt.wantErr)
			}
		})
	}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
		t.Fatal(err)
	}
	if err := testenv.RevisionsAre(ctx, k8s, ns.Name, "webapp-shop", "1:deployed"); err != nil {
		t.Errorf("after the diffs: %v", err)
	}
}
