//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Issue 36, `rudder diff`: what applying a WebApp would change, object by
// object, with the exit status of kubectl diff. An unchanged WebApp shows
// nothing (0); a new image shows the Deployment's one changed line (1); a
// WebApp that does not exist shows the whole install; a change of the
// Secret a WebApp takes values from shows the env var changed, masked.
// Nothing is changed by a diff: the release stays at its revision.
func TestDiff_CLI(t *testing.T) {
	t.Parallel() // its own namespace and operator
	const ns = "rudder-diff"
	privateOperator(t, ns)
	apply(t, `apiVersion: v1
kind: Secret
metadata: {name: shop-token, namespace: rudder-diff}
stringData: {token: first-diff-token}
`)
	shop := `apiVersion: webapp.my.domain/v1
kind: WebApp
metadata:
  name: shop
  namespace: rudder-diff
  annotations:
    rudder.dev/values-from: |
      - kind: Secret
        name: shop-token
        valuesKey: token
        targetPath: config.API_TOKEN
spec: {image: "nginx:1.25", replicas: 1, port: 80}
`
	app := newApp(t, ns, "shop")
	apply(t, shop)
	app.waitServing(1, "nginx:1.25", 1)

	out, code := rudderDiff(t, shop)
	if code != 0 || out != "" {
		t.Errorf("rudder diff of the applied WebApp: exit %d, want 0 and nothing printed; printed:\n%s", code, out)
	}

	// The chart's version label follows the image's tag: a new registry,
	// same tag, changes the image alone.
	out, code = rudderDiff(t, strings.Replace(shop, `"nginx:1.25"`, `"mirror.example.com/nginx:1.25"`, 1))
	if lines := changed(out); code != 1 || len(lines) != 2 || !strings.HasSuffix(lines[0], "image: nginx:1.25") ||
		!strings.HasSuffix(lines[1], "image: mirror.example.com/nginx:1.25") ||
		!strings.Contains(out, "release webapp-shop would be upgraded from revision 1 to 2") ||
		!strings.Contains(out, "+++ apps/v1 Deployment rudder-diff/shop (revision 2)") {
		t.Errorf("rudder diff of a new image: exit %d, want 1 with the Deployment's image line only; printed:\n%s", code, out)
	}

	// Two resources in one file: the unchanged one shows nothing, the new one its install.
	fresh := strings.NewReplacer("name: shop\n", "name: fresh\n").Replace(shop)
	out, code = rudderDiff(t, shop+"---\n"+fresh)
	if code != 1 || !strings.Contains(out, "release webapp-fresh would be installed as revision 1") ||
		!strings.Contains(out, "+++ apps/v1 Deployment rudder-diff/fresh (revision 1)") ||
		!strings.Contains(out, "+++ v1 Service rudder-diff/fresh (revision 1)") || strings.Contains(out, "webapp/shop") {
		t.Errorf("rudder diff of an unchanged and a new WebApp: exit %d, want 1 with the new one's install only; printed:\n%s", code, out)
	}

	// Paused, so that the operator does not upgrade while the diff looks.
	app.annotate("rudder.dev/paused=true")
	kubectl(t, "patch", "secret", "shop-token", "-n", ns, "--type", "merge", "-p", `{"stringData":{"token":"second-diff-token"}}`)
	out, code = rudderDiff(t, shop)
	if lines := changed(out); code != 1 || len(lines) != 2 || !strings.Contains(lines[0], "*** (before)") || !strings.Contains(lines[1], "*** (after)") {
		t.Errorf("rudder diff after the values Secret changed: exit %d, want 1 with the env var's line masked; printed:\n%s", code, out)
	}
	js, code := rudderDiff(t, shop, "-o", "json")
	var report struct {
		Resources []struct{ Action string } `json:"resources"`
	}
	if err := json.Unmarshal([]byte(js), &report); code != 1 || err != nil || len(report.Resources) != 1 || report.Resources[0].Action != "upgrade" {
		t.Errorf("rudder diff -o json: exit %d, decoding %v; printed:\n%s", code, err, js)
	}
	for _, secret := range []string{"first-diff-token", "second-diff-token"} {
		if strings.Contains(out, secret) || strings.Contains(js, secret) {
			t.Errorf("rudder diff shows what the Secret holds (%s):\n%s\n%s", secret, out, js)
		}
	}
	if revs := kubectl(t, "get", "secrets", "-n", ns, "-l", "owner=helm,name=webapp-shop", "-o", "name"); strings.Count(revs, "\n") != 1 {
		t.Errorf("after the diffs, release webapp-shop has these revisions, want revision 1 alone:\n%s", revs)
	}
	if out := kubectl(t, "get", "webapps,deployments", "-n", ns, "-o", "name"); strings.Contains(out, "fresh") {
		t.Errorf("the diff of a new WebApp made objects:\n%s", out)
	}
}

// rudderDiff runs `rudder diff -f - [args]` with manifest on standard input
// and returns its standard output and exit status; it fails t when the
// command cannot run.
func rudderDiff(t *testing.T, manifest string, args ...string) (string, int) {
	t.Helper()
	bin := toolPath("rudder")
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"diff", "-f", "-"}, args...)...)
	cmd.Dir = root
	cmd.Stdin = strings.NewReader(manifest)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	started := time.Now()
	err := cmd.Run()
	t.Logf("rudder diff %s: %s", strings.Join(args, " "), time.Since(started).Round(time.Millisecond))
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		if exit.ExitCode() > 1 {
			t.Fatalf("rudder diff: exit %d: %s", exit.ExitCode(), errOut.String())
		}
		return out.String(), exit.ExitCode()
	case err != nil:
		t.Fatalf("rudder diff: %v", err)
	}
	return out.String(), 0
}

// changed returns the - and + lines of unified diffs, headers aside.
func changed(diff string) []string {
	var out []string
	for _, l := range strings.Split(diff, "\n") {
		if (strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+")) && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "+++") {
			out = append(out, l)
		}
	}
	return out
}
