package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/rudder-operator/rudder/test/testenv"
)

// kubectlFlags are kubectl's flags every command accepts; no cluster is
// reached with them, as --help runs no command.
var kubectlFlags = []string{"--kubeconfig", "/nonexistent/kubeconfig", "--context", "prod", "--cluster", "c",
	"-n", "team-a", "--namespace=team-a", "--as", "jane", "--as-group", "devs", "--request-timeout", "5s", "--user", "u"}

// commandPaths returns the path of every command of the tree under cmd, as
// its arguments: {"history"}, {"completion", "bash"}, ...
func commandPaths(cmd *cobra.Command, parent []string) [][]string {
	var paths [][]string
	for _, c := range cmd.Commands() {
		p := append(append([]string{}, parent...), c.Name())
		paths = append(paths, p)
		paths = append(paths, commandPaths(c, p)...)
	}
	return paths
}

// TestNewCommand_Help runs `--help`, with kubectl's flags, on every command
// of the tree, called as rudder and as the kubectl plugin: it succeeds and
// prints the usage under the name it was called by, with examples for
// rudder's own commands.
func TestNewCommand_Help(t *testing.T) {
	paths := commandPaths(NewCommand(Options{}), nil)
	if len(paths) < 10 {
		t.Fatalf("the tree has %d commands: %v", len(paths), paths)
	}
	for _, name := range []string{"rudder", "kubectl rudder"} {
		for _, path := range append(paths, nil) {
			t.Run(name+" "+strings.Join(path, " "), func(t *testing.T) {
				var out, errOut bytes.Buffer
				args := append(append(append([]string{}, path...), kubectlFlags...), "--help")
				err := Run(context.Background(), args, Options{Name: name, IO: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}})
				if err != nil {
					t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
				}
				help := out.String()
				usage := "Usage:\n  " + strings.TrimSpace(name+" "+strings.Join(path, " "))
				if !strings.Contains(help, usage) {
					t.Errorf("the help lacks %q:\n%s", usage, help)
				}
				own := len(path) > 0 && path[0] != "completion" && path[0] != "help"
				if own && !strings.Contains(help, "Examples:\n") {
					t.Errorf("the help has no examples:\n%s", help)
				}
				if name != "rudder" && strings.Contains(help, "\n  rudder ") {
					t.Errorf("the plugin's help shows examples as rudder, not %s:\n%s", name, help)
				}
				for _, flag := range []string{"--kubeconfig", "--context", "--as ", "--request-timeout", "-n, --namespace"} {
					if !strings.Contains(help, flag) {
						t.Errorf("the help does not list %s", flag)
					}
				}
			})
		}
	}
}

// TestRun_FlagErrors checks that bad flags and arguments fail, before any
// cluster is reached, with an error naming the flag or argument and the fix.
func TestRun_FlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string // each in the error
	}{
		{name: "unknown flag", args: []string{"history", "webapp/a", "--bogus"}, want: []string{"unknown flag: --bogus", "rudder history --help"}},
		{name: "flag of another command", args: []string{"history", "webapp/a", "--to", "2"}, want: []string{"unknown flag: --to"}},
		{name: "unknown command", args: []string{"launch"}, want: []string{`unknown command "launch"`}},
		{name: "no resource", args: []string{"rollback"}, want: []string{"want <kind>/<name>", "such as webapp/my-webapp"}},
		{name: "two resources", args: []string{"test", "webapp/a", "webapp/b"}, want: []string{"want <kind>/<name>"}},
		{name: "bad output", args: []string{"history", "webapp/a", "-o", "wide"}, want: []string{`flag -o: "wide"`, "use json or yaml"}},
		{name: "negative wait", args: []string{"reconcile", "webapp/a", "--wait", "-2m"}, want: []string{"flag --wait", "use 0"}},
		{name: "bad wait", args: []string{"test", "webapp/a", "--wait", "soon"}, want: []string{`invalid argument "soon" for "--wait"`}},
		{name: "bad revision", args: []string{"rollback", "webapp/a", "--to", "-1"}, want: []string{"flag --to"}},
		{name: "argument to a flags-only command", args: []string{"manifests", "extra"}, want: []string{`unexpected argument "extra"`}},
		{name: "no kubeconfig", args: []string{"history", "webapp/a", "--kubeconfig", "/nonexistent/kubeconfig"},
			want: []string{"reading the kubeconfig", "--kubeconfig"}},
		{name: "unknown context", args: []string{"history", "webapp/a", "--kubeconfig", kubeconfig, "--context", "prod"},
			want: []string{`context "prod" does not exist`, "--context"}},
		{name: "bad request timeout", args: []string{"history", "webapp/a", "--kubeconfig", kubeconfig, "--request-timeout", "soon"},
			want: []string{"timeout"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Main(context.Background(), tt.args, Options{IO: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}})
			if code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("the error %q lacks %q", errOut.String(), w)
				}
			}
		})
	}
}

// TestRun_Context checks that --context picks the kubeconfig's context: the
// current one reaches no server.
func TestRun_Context(t *testing.T) {
	ctx := context.Background()
	ns := testenv.Namespace(t, k8s, "cli-context-")
	args := []string{"reconcile", "webapp/none", "-n", ns, "--kubeconfig", kubeconfig}
	if err := Run(ctx, append(args, "--request-timeout", "5s"), Options{IO: genericiooptions.IOStreams{Out: &bytes.Buffer{}}}); err == nil ||
		!strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("with the current context: error %v, want one reaching 127.0.0.1:1", err)
	}
	if err := Run(ctx, append(args, "--context", "envtest"), Options{IO: genericiooptions.IOStreams{Out: &bytes.Buffer{}}}); err == nil ||
		!strings.Contains(err.Error(), `"none" not found`) {
		t.Errorf("with --context envtest: error %v, want the resource not found", err)
	}
}

// TestRun_Completion checks cobra's completion scripts, and that resource
// arguments complete to the kinds, then to the names the cluster has.
func TestRun_Completion(t *testing.T) {
	ctx := context.Background()
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		out, err := run(ctx, "completion", shell)
		if err != nil || len(out) < 1000 || !strings.Contains(out, "rudder") {
			t.Errorf("completion %s: error %v, %d bytes:\n%.300s", shell, err, len(out), out)
		}
	}
	ns := testenv.Namespace(t, k8s, "cli-complete-")
	app := testenv.NewObject(webAppGVK, ns, "shop", map[string]any{"image": "nginx:1.25", "port": int64(80), "replicas": int64(1)})
	if err := k8s.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "kinds", args: []string{"__complete", "history", ""}, want: "webapp/\n"},
		{name: "names", args: []string{"__complete", "history", "-n", ns, "webapp/"}, want: "webapp/shop\n"},
		{name: "names after the kind", args: []string{"__complete", "rollback", "-n", ns, "webapp", ""}, want: "shop\n"},
		{name: "output formats", args: []string{"__complete", "history", "webapp/shop", "-o", ""}, want: "json\nyaml\n"},
		{name: "rbac kinds", args: []string{"__complete", "rbac", ""}, want: "database\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(ctx, tt.args...)
			if err != nil || !strings.Contains(out, tt.want) {
				t.Errorf("%v: error %v, output %q, want it to contain %q", tt.args, err, out, tt.want)
			}
		})
	}
}

func TestInvocation(t *testing.T) {
	tests := []struct {
		name     string
		argv     []string
		wantName string
		wantArgs []string
	}{
		{name: "rudder", argv: []string{"rudder", "history"}, wantName: "rudder", wantArgs: []string{"history"}},
		{name: "a path", argv: []string{"/usr/local/bin/rudder"}, wantName: "rudder"},
		{name: "the plugin", argv: []string{"bin/kubectl-rudder", "history", "-h"}, wantName: "kubectl rudder", wantArgs: []string{"history", "-h"}},
		{name: "the plugin on Windows", argv: []string{"kubectl-rudder.exe"}, wantName: "kubectl rudder"},
		{name: "the plugin's completion", argv: []string{"/bin/kubectl_complete-rudder", "history", ""}, wantName: "kubectl rudder",
			wantArgs: []string{"__complete", "history", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, args := Invocation(tt.argv)
			if name != tt.wantName || !slices.Equal(args, tt.wantArgs) {
				t.Errorf("Invocation(%q) = %q, %q; want %q, %q", tt.argv, name, args, tt.wantName, tt.wantArgs)
			}
		})
	}
}

func TestResourceArg(t *testing.T) {
	tests := []struct {
		name               string
		args               []string
		wantKind, wantName string
		wantErr            string
	}{
		{name: "kind/name", args: []string{"webapp/shop"}, wantKind: "webapp", wantName: "shop"},
		{name: "kind name", args: []string{"webapps.webapp.my.domain", "shop"}, wantKind: "webapps.webapp.my.domain", wantName: "shop"},
		{name: "kind only", args: []string{"webapp"}, wantErr: `want <kind>/<name>, such as webapp/my-webapp; got "webapp"`},
		{name: "empty name", args: []string{"webapp/"}, wantErr: "want <kind>/<name>"},
		{name: "two slashes", args: []string{"webapp/a/b"}, wantErr: "want <kind>/<name>"},
		{name: "slash and name", args: []string{"webapp/a", "b"}, wantErr: "or <kind> <name>"},
		{name: "none", args: nil, wantErr: "name the resource"},
		{name: "three", args: []string{"a", "b", "c"}, wantErr: "got 3 arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, name, err := resourceArg(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || kind != tt.wantKind || name != tt.wantName {
				t.Errorf("= %q, %q, %v; want %q, %q", kind, name, err, tt.wantKind, tt.wantName)
			}
		})
	}
}

// TestRun_HistoryOutput checks `rudder history -o json|yaml` against a
// release rudder installed: helm history's fields, the table's content.
func TestRun_HistoryOutput(t *testing.T) {
	ctx := context.Background()
	ns := testenv.Namespace(t, k8s, "cli-output-")
	app := testenv.NewObject(webAppGVK, ns, "shop", map[string]any{"image": "nginx:1.25", "port": int64(80), "replicas": int64(1)})
	if err := k8s.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "revision 1 deployed", func() bool {
		out, err := run(ctx, "history", "webapp/shop", "-n", ns)
		return err == nil && strings.Contains(out, "deployed")
	})
	for _, output := range []string{"json", "yaml"} {
		t.Run(output, func(t *testing.T) {
			out, err := run(ctx, "history", "webapp/shop", "-n", ns, "-o", output)
			if err != nil {
				t.Fatal(err)
			}
			data := []byte(out)
			if output == "yaml" {
				if data, err = yaml.YAMLToJSON(data); err != nil {
					t.Fatalf("not YAML: %v\n%s", err, out)
				}
			} else if !json.Valid(data) {
				t.Fatalf("not JSON:\n%s", out)
			}
			var revs []map[string]any
			if err := json.Unmarshal(data, &revs); err != nil {
				t.Fatalf("not a list of revisions: %v\n%s", err, out)
			}
			if len(revs) != 1 {
				t.Fatalf("%d revisions, want 1:\n%s", len(revs), out)
			}
			r := revs[0]
			updated, _ := time.Parse(time.RFC3339, fmt.Sprint(r["updated"]))
			if r["revision"] != float64(1) || r["status"] != "deployed" || r["description"] != "Install complete" ||
				!strings.HasPrefix(fmt.Sprint(r["chart"]), "webapp-") || time.Since(updated) > 10*time.Minute {
				t.Errorf("revision 1 is %v", r)
			}
			for _, field := range []string{"app_version"} {
				if _, ok := r[field]; !ok {
					t.Errorf("revision 1 lacks %s: %v", field, r)
				}
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantCode int
		wantOut  string
	}{
		{name: "success", err: nil, wantCode: 0, wantOut: ""},
		{name: "an error", err: errors.New("flag -o: bad"), wantCode: 1, wantOut: "rudder: flag -o: bad\n"},
		{name: "a code alone", err: &ExitError{Code: 1}, wantCode: 1, wantOut: ""},
		{name: "a code and an error", err: &ExitError{Code: 2, Err: errors.New("no cluster")}, wantCode: 2, wantOut: "rudder: no cluster\n"},
		{name: "a code wrapped", err: fmt.Errorf("diffing: %w", &ExitError{Code: 3}), wantCode: 3, wantOut: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if code := exitCode(tt.err, &out, "rudder"); code != tt.wantCode || out.String() != tt.wantOut {
				t.Errorf("exitCode(%v) = %d, printed %q; want %d, %q", tt.err, code, out.String(), tt.wantCode, tt.wantOut)
			}
		})
	}
}

// TestRun_RBACWithoutCluster checks that `rudder rbac` works with no
// kubeconfig at all (kubectl's default server, which does not answer), from
// client-go's scheme, and fails on a kubeconfig named but missing.
func TestRun_RBACWithoutCluster(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", empty)
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}
	if err := Run(context.Background(), []string{"rbac", "webapp", "-n", "team-a"}, Options{IO: streams}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "# note: the API server did not answer") || !strings.Contains(out.String(), "namespace: team-a") {
		t.Errorf("without a kubeconfig: expected the note and the Role in team-a:\n%s", out.String())
	}
	err := Run(context.Background(), []string{"rbac", "webapp", "--kubeconfig", "/nonexistent/kubeconfig"}, Options{IO: streams})
	if err == nil || !strings.Contains(err.Error(), "--kubeconfig") {
		t.Errorf("with a missing --kubeconfig: error %v, want one naming --kubeconfig", err)
	}
}
