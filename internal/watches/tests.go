package watches

import "time"

// DefaultTestTimeout bounds one run of a release's tests when test.timeout is absent.
const DefaultTestTimeout = 5 * time.Minute

// Test says how a kind's chart tests run: the templates annotated helm.sh/hook: test, as `helm test` runs
// them. They always run on request (`rudder test`); Enable runs them after every install and upgrade too.
type Test struct {
	// Enable runs the tests once after every install and upgrade rudder makes, when the new revision is first
	// Ready. A failed test then counts as a failed upgrade under the kind's remediation, unless
	// IgnoreFailures. Default false.
	Enable bool
	// Timeout bounds one run of the tests. Default DefaultTestTimeout.
	Timeout time.Duration
	// IgnoreFailures reports a failed test (condition Tested, an event, status.history) without counting the
	// revision as failed. Default false.
	IgnoreFailures bool
}

// testFields is the test field as written (Flux's HelmRelease spec.test).
type testFields struct {
	Enable         *bool   `json:"enable"`
	Timeout        *string `json:"timeout"`
	IgnoreFailures *bool   `json:"ignoreFailures"`
}

// test checks the test field and fills in its defaults.
func (e *entry) test(f *testFields) Test {
	t := Test{Timeout: DefaultTestTimeout}
	if f == nil {
		return t
	}
	t.Enable = f.Enable != nil && *f.Enable
	t.IgnoreFailures = f.IgnoreFailures != nil && *f.IgnoreFailures
	if f.Timeout != nil {
		d, err := time.ParseDuration(*f.Timeout)
		switch {
		case err != nil:
			e.fail("test.timeout", err, `%q is not a duration; use a Go duration such as "90s" or "5m"`, *f.Timeout)
		case d <= 0:
			e.fail("test.timeout", nil, `%q is not positive; use a duration such as "5m", or leave the field out for %s`,
				*f.Timeout, DefaultTestTimeout)
		default:
			t.Timeout = d
		}
	}
	return t
}
