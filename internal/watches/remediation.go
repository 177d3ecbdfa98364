package watches

import (
	"strings"
	"time"
)

// Strategy is what rudder does about an upgrade that failed: a render error, an object the API server
// rejected, or a revision not Ready within Remediation.ReadinessTimeout.
type Strategy string

const (
	// StrategyRetry tries a failed upgrade again with exponential backoff (10s, 20s, 40s, … at most 5m), at
	// most Remediation.MaxAttempts times, then holds. A revision that is not Ready in time is reported in the
	// Ready condition and left serving: applying the same objects again would not help.
	StrategyRetry Strategy = "retry"
	// StrategyRollback tries a failed upgrade as StrategyRetry does; when the last attempt fails, or the
	// deployed revision is not Ready in time, it rolls the release back to the last revision that was
	// deployed, once, and holds there until the spec or the chart changes.
	StrategyRollback Strategy = "rollback"
)

// InstallFailure is what happens to the release of an install that failed.
type InstallFailure string

const (
	// InstallFailureKeep keeps a failed install's revision and objects for inspection (helm status, helm get
	// manifest); the next attempt uninstalls it first.
	InstallFailureKeep InstallFailure = "keep"
	// InstallFailureUninstall uninstalls a failed install right away, objects and revision, so that nothing
	// half-made is left behind.
	InstallFailureUninstall InstallFailure = "uninstall"
)

// OutOfBand is what rudder does when the revision serving a release was written by another Helm client,
// such as `helm upgrade` or `helm rollback` run by hand.
type OutOfBand string

const (
	// OutOfBandRevert upgrades the release back to the custom resource's spec on the next reconcile, as a new
	// revision.
	OutOfBandRevert OutOfBand = "revert"
	// OutOfBandKeep leaves the hand-made revision serving until the spec or the chart changes.
	OutOfBandKeep OutOfBand = "keep"
)

// DefaultMaxAttempts is how many times one spec (values and chart) is tried when remediation.maxAttempts is
// absent.
const DefaultMaxAttempts = 3

// Remediation says how the releases of a kind recover from failed installs and upgrades.
type Remediation struct {
	// Strategy is what a failed upgrade leads to. Default StrategyRetry.
	Strategy Strategy
	// MaxAttempts is how many times one spec is installed or upgraded before rudder holds it until the spec
	// or the chart changes. Default DefaultMaxAttempts.
	MaxAttempts int
	// ReadinessTimeout is how long a new revision has to become Ready after its deploy; a revision that does
	// not counts as a failed upgrade. Default 0: no timeout.
	ReadinessTimeout time.Duration
	// InstallFailure is what happens to a failed install. Default InstallFailureKeep.
	InstallFailure InstallFailure
}

// remediationFields is the remediation field as written.
type remediationFields struct {
	Strategy         *string `json:"strategy"`
	MaxAttempts      *int    `json:"maxAttempts"`
	ReadinessTimeout *string `json:"readinessTimeout"`
	InstallFailure   *string `json:"installFailure"`
}

// remediation checks the remediation field and fills in its defaults.
func (e *entry) remediation(f *remediationFields) Remediation {
	if f == nil {
		f = &remediationFields{}
	}
	return Remediation{
		Strategy: oneOf(e, "remediation.strategy", f.Strategy, StrategyRetry, StrategyRollback),
		MaxAttempts: e.atLeastOne("remediation.maxAttempts", f.MaxAttempts, DefaultMaxAttempts,
			"rudder must try a spec at least once"),
		ReadinessTimeout: e.readinessTimeout(f.ReadinessTimeout),
		InstallFailure:   oneOf(e, "remediation.installFailure", f.InstallFailure, InstallFailureKeep, InstallFailureUninstall),
	}
}

// readinessTimeout parses remediation.readinessTimeout; absent means 0, no timeout.
func (e *entry) readinessTimeout(s *string) time.Duration {
	const field = "remediation.readinessTimeout"
	if s == nil {
		return 0
	}
	d, err := time.ParseDuration(*s)
	switch {
	case err != nil:
		e.fail(field, err, `%q is not a duration; use a Go duration such as "90s" or "5m", or "0" for no timeout`, *s)
	case d < 0:
		e.fail(field, nil, `%q is negative; use a positive duration such as "5m", or "0" for no timeout`, *s)
	}
	return d
}

// oneOf checks a field that takes one of a few words; the first is the default.
func oneOf[T ~string](e *entry, field string, v *string, def T, others ...T) T {
	if v == nil {
		return def
	}
	allowed := append([]T{def}, others...)
	for _, a := range allowed {
		if T(*v) == a {
			return a
		}
	}
	words := make([]string, len(allowed))
	for i, a := range allowed {
		words[i] = string(a)
	}
	e.fail(field, nil, "%q is not one of %s; use one of them (they are case sensitive), or leave the field out "+
		"for the default %s", *v, strings.Join(words, ", "), def)
	return def
}

// outOfBand checks the outOfBand field.
func (e *entry) outOfBand(v *string) OutOfBand {
	return oneOf(e, "outOfBand", v, OutOfBandRevert, OutOfBandKeep)
}
