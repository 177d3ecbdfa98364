package helm

import (
	"fmt"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/action"
	release "helm.sh/helm/v4/pkg/release/v1"
)

// TestRun is how one run of a release's tests ended.
type TestRun struct {
	// Revision is the revision tested: the newest stored one, as `helm test` tests.
	Revision int
	// Passed is true when every test hook succeeded; a revision without tests passes.
	Passed bool
	// Tests are the test hooks that ran, each as "<kind>/<name>: <phase>".
	Tests []string
	// Started and Completed bound the run.
	Started, Completed time.Time
	// Failure says why a run did not pass: Helm's error, which names the test.
	Failure string
}

// Test runs the test hooks (helm.sh/hook: test) of release name's newest
// revision within timeout, as `helm test` does. Helm records each hook's last
// run in the revision, and its hooks' delete policies are carried out before
// Test returns (Helm's shutdown function). A test that fails is reported in
// the TestRun; the error is for a run that could not start (no such
// release, storage).
func (c *Client) Test(name string, timeout time.Duration) (TestRun, error) {
	c.read.afresh()
	l, err := c.cfg.Releases.Last(name)
	if err != nil {
		return TestRun{}, fmt.Errorf("reading release %q: %w", name, err)
	}
	last, err := v1(l)
	if err != nil {
		return TestRun{}, fmt.Errorf("reading release %q: %w", name, err)
	}
	t := action.NewReleaseTesting(c.cfg)
	t.Namespace, t.Timeout = c.namespace, timeout
	run := TestRun{Revision: last.Version, Started: time.Now()}
	r, shutdown, err := t.Run(name)
	if shutdown != nil {
		if serr := shutdown(); serr != nil && err == nil {
			err = fmt.Errorf("cleaning up after the tests: %w", serr)
		}
	}
	run.Completed = time.Now()
	rel, _ := v1(r)
	if rel == nil {
		rel = last
	}
	for _, h := range rel.Hooks {
		if isTest(h) && h.LastRun.Phase != "" && !h.LastRun.StartedAt.Before(run.Started.Truncate(time.Second)) {
			run.Tests = append(run.Tests, fmt.Sprintf("%s/%s: %s", h.Kind, h.Name, h.LastRun.Phase))
		}
	}
	run.Passed = err == nil
	if err != nil {
		run.Failure = strings.Join(strings.Fields(err.Error()), " ") // one line: Helm's multi-errors span several
	}
	return run, nil
}

func isTest(h *release.Hook) bool {
	for _, e := range h.Events {
		if e == release.HookTest {
			return true
		}
	}
	return false
}
