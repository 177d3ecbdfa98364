//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Timeouts of the tests. Generous: the tests share a slow 2-core machine.
const (
	// waitTimeout bounds every wait for the cluster or rudder to converge.
	waitTimeout = 2 * time.Minute
	// pollInterval is how often a wait looks again.
	pollInterval = time.Second
	// commandTimeout bounds a single kubectl or helm command.
	commandTimeout = 3 * time.Minute
)

// errCommand wraps the failure of a kubectl or helm command.
var errCommand = errors.New("command failed")

// envCLIBin names the rudder command line the tests run instead of
// bin/rudder (its directory also holds kubectl-rudder, for `kubectl rudder`).
const envCLIBin = "RUDDER_CLI_BIN"

// toolPath returns the path of bin/<tool>, or of $RUDDER_CLI_BIN for rudder.
func toolPath(tool string) string {
	if bin := os.Getenv(envCLIBin); bin != "" && tool == "rudder" {
		return bin
	}
	return filepath.Join(root, "bin", tool)
}

// runFull runs bin/<tool> (kubectl, helm, helm3 or rudder) with args from the
// repository root, with the environment's KUBECONFIG, and returns its stdout
// and stderr. The error, when the command fails, includes stderr.
func runFull(tool string, args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, toolPath(tool), args...)
	// kubectl finds its plugin kubectl-rudder next to rudder.
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(toolPath("rudder"))+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Dir = root
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), errOut.String(), fmt.Errorf("%w: %s %s: %w; stderr: %s",
			errCommand, tool, strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), errOut.String(), nil
}

// run is runFull without stderr.
func run(tool string, args ...string) (string, error) {
	out, _, err := runFull(tool, args...)
	return out, err
}

// kubectl runs bin/kubectl and returns its stdout; it fails t when the command fails.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run("kubectl", args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// helm runs bin/helm and returns its stdout; it fails t when the command fails.
func helm(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run("helm", args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// seedFull runs a command line as the seed document writes it, e.g.
// `kubectl patch webapp my-app --type merge -p '{"spec":{"replicas":10}}'`,
// with bin/kubectl or bin/helm, and returns stdout and stderr. It fails t when
// the command fails.
func seedFull(t *testing.T, line string) (stdout, stderr string) {
	t.Helper()
	args, err := splitCommandLine(line)
	if err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	if len(args) == 0 || (args[0] != "kubectl" && args[0] != "helm") {
		t.Fatalf("%q: expected a kubectl or helm command", line)
	}
	t.Logf("$ %s", line)
	stdout, stderr, err = runFull(args[0], args[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", firstLines(stdout+stderr, 25))
	return stdout, stderr
}

// seed is seedFull without stderr.
func seed(t *testing.T, line string) string {
	t.Helper()
	out, _ := seedFull(t, line)
	return out
}

// splitCommandLine splits line into words as a POSIX shell would for the
// subset the seed uses: blanks separate words; single quotes keep their text
// as is; double quotes group words. Anything else (pipes, variables) is
// refused rather than misread.
func splitCommandLine(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'' || c == '"':
			end := strings.IndexByte(line[i+1:], c)
			if end < 0 {
				return nil, fmt.Errorf("unterminated %c quote", c)
			}
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case strings.IndexByte("|&;<>$`\\", c) >= 0:
			return nil, fmt.Errorf("shell syntax %q is not supported; run the parts separately", c)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// eventually calls check until it returns nil, failing t after waitTimeout
// with check's last error, which should say what was expected and what was seen.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	eventuallyWithin(t, waitTimeout, what, check)
}

// eventuallyWithin is eventually with its own timeout.
func eventuallyWithin(t *testing.T, timeout time.Duration, what string, check func() error) {
	t.Helper()
	eventuallyEvery(t, timeout, pollInterval, what, check)
}

// eventuallyEvery is eventuallyWithin calling check every interval: for
// checks that list thousands of objects.
func eventuallyEvery(t *testing.T, timeout, interval time.Duration, what string, check func() error) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		err := check()
		if err == nil {
			t.Logf("%s: took %s", what, time.Since(start).Round(100*time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s: %v", timeout, what, err)
		}
		time.Sleep(interval)
	}
}

// getJSON runs `kubectl get ARGS -o json` and decodes the result into into.
// found is false when the object does not exist.
func getJSON(into any, args ...string) (found bool, err error) {
	out, stderr, err := runFull("kubectl", append(append([]string{"get"}, args...), "-o", "json")...)
	if err != nil {
		if strings.Contains(stderr, "NotFound") || strings.Contains(stderr, "not found") {
			return false, nil
		}
		return false, err
	}
	if err := json.Unmarshal([]byte(out), into); err != nil {
		return true, fmt.Errorf("decoding `kubectl get %s`: %w", strings.Join(args, " "), err)
	}
	return true, nil
}

// mustGetJSON is getJSON that fails t unless the object exists.
func mustGetJSON(t *testing.T, into any, args ...string) {
	t.Helper()
	found, err := getJSON(into, args...)
	if err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Fatalf("expected %s to exist, saw NotFound", strings.Join(args, " "))
	}
}

// toJSON renders v for failure messages.
func toJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%+v", v)
	}
	return string(b)
}

// normalizeJSON decodes v's JSON encoding into generic maps and slices, so
// that values from different sources compare with reflect.DeepEqual.
func normalizeJSON(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(b, &out)
	return out, err
}

// firstLines returns the first n lines of s, saying how many it left out.
func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= n {
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n[... %d more lines]", len(lines)-n)
}
