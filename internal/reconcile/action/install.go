package action

import (
	"context"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/owner"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/stored"
)

// Chart is the kind's chart and how its releases are written from it.
type Chart struct {
	// Load returns a fresh copy of the chart: Helm edits the chart it renders.
	Load        func() (*helm.Chart, error)
	MaxHistory  int             // revisions kept in storage (watches.yaml maxHistory)
	MaxAttempts int             // tries of one spec (remediation.maxAttempts)
	Mapper      meta.RESTMapper // tells namespaced kinds from cluster-scoped ones
}

// Install installs the first revision of a release.
//
// Precondition: storage holds no revision of the release, or its newest is
// uninstalled (helm uninstall --keep-history), which this install replaces.
// On success: event InstallSucceeded, and no status until the next reconcile,
// which the revision's storage Secret brings, assesses the new revision.
// On failure: Released False (InstallFailed), phase Failed, event
// InstallFailed; tried again with backoff, at most remediation.maxAttempts times for the
// same values and chart.
type Install struct {
	Writer
	Chart Chart
}

// Run installs rel.
func (s Install) Run(ctx context.Context, rel *Release) (Result, error) {
	return act(ctx, s.Writer, s.Chart, rel, helmAction{
		verb:      "Install",
		succeeded: status.ReasonInstallSucceeded,
		failed:    status.ReasonInstallFailed,
		do: func(ctx context.Context, c *helm.Client, spec helm.Spec) (*helm.Release, error) {
			spec.Replace = rel.Facts.Latest != nil && rel.Facts.Latest.Status == "uninstalled"
			return c.Install(ctx, spec)
		},
	})
}

// Upgrade makes a new revision with the custom resource's current values and
// the kind's current chart, pruning storage to the kind's maxHistory.
//
// Precondition: a revision is deployed and its values or chart digest differ
// from the wanted ones, or none is deployed any more but one was (an upgrade
// canceled half-way left it superseded); no operation is pending.
// On success: event UpgradeSucceeded, and no status until the next reconcile,
// which the revision's storage Secret brings, assesses the new revision.
// On failure: Released False (UpgradeFailed), phase Failed, event
// UpgradeFailed; the deployed revision keeps serving; tried again with
// backoff, at most remediation.maxAttempts times for the same values and chart.
type Upgrade struct {
	Writer
	Chart Chart
}

// Run upgrades rel.
func (s Upgrade) Run(ctx context.Context, rel *Release) (Result, error) {
	return act(ctx, s.Writer, s.Chart, rel, helmAction{
		verb:      "Upgrade",
		succeeded: status.ReasonUpgradeSucceeded,
		failed:    status.ReasonUpgradeFailed,
		// A rollback's labels stay with the rollback.
		clear: []string{stored.LabelRollbackTo, stored.LabelRollbackGeneration, stored.LabelFailedValuesDigest, stored.LabelFailedChartDigest, stored.LabelReady, stored.LabelTest, stored.LabelTestedAt},
		do: func(ctx context.Context, c *helm.Client, spec helm.Spec) (*helm.Release, error) {
			return c.Upgrade(ctx, spec)
		},
	})
}

// helmAction describes an install or an upgrade for act.
type helmAction struct {
	verb      string // "Install", "Upgrade": the event's action
	succeeded string // event reason on success
	failed    string // condition and event reason on failure
	// clear are labels an older revision may carry that must not pass to the
	// new one (Helm's upgrade keeps the labels of the revision before it).
	clear []string
	do    func(context.Context, *helm.Client, helm.Spec) (*helm.Release, error)
}

// act runs a Helm install or upgrade of rel with its values and the kind's
// chart, then records in memory what storage must show next (an
// expectation) and what failed (a failure).
func act(ctx context.Context, w Writer, c Chart, rel *Release, a helmAction) (Result, error) {
	log := ctrl.LoggerFrom(ctx)
	load := c.Load
	if rel.Chart != nil {
		load = rel.Chart
	}
	chrt, err := load()
	if err != nil {
		return Result{}, err
	}
	spec := helm.Spec{
		Name:         rel.Release.Name,
		Chart:        chrt,
		Values:       rel.Values,
		Labels:       labels(w, rel, a.clear),
		MaxHistory:   c.MaxHistory,
		PostRenderer: owner.PostRenderer{Owner: rel.Resource, Release: rel.Release.Name, Mapper: c.Mapper, Scope: rel.Scope},
	}
	started := time.Now()
	written, err := a.do(ctx, rel.Helm, spec)
	if written != nil {
		w.expect(rel, written)
		written = mark(ctx, rel.Helm, written)
		w.Memory.RememberWritten(rel.Key, written)
	}
	if err == nil || !helm.NamespaceTerminating(err) {
		w.ObserveHelm(strings.ToLower(a.verb), started, err)
	}
	if err != nil && helm.NamespaceTerminating(err) {
		// Its deletion reaches the custom resource next: nothing failed.
		log.V(1).Info("Helm "+a.verb+" stopped: the namespace is being deleted", "error", err.Error())
		return Result{Done: true}, nil
	}
	now := w.Clock.Now()
	if err != nil {
		msg := err.Error()
		reason := FailureReason(err, a.failed)
		fl := w.Memory.RecordFailure(rel.Key, rel.Facts.Want, reason, msg, now)
		log.Error(err, "Helm "+a.verb+" failed", "attempt", fl.Count, "maxAttempts", c.MaxAttempts)
		w.Events.Eventf(rel.Resource, nil, corev1.EventTypeWarning, reason, a.verb, "%s failed (attempt %d of %d): %s", a.verb, fl.Count, c.MaxAttempts, msg)
		rel.Outcome = &status.Outcome{Phase: status.PhaseFailed, Reason: reason, Message: msg, Failed: true}
		if fl.Count >= c.MaxAttempts {
			// The next reconcile holds, or remediates as the kind's policy says.
			return Result{Result: ctrl.Result{RequeueAfter: 250 * time.Millisecond}}, nil
		}
		return Result{Result: ctrl.Result{RequeueAfter: fl.RetryIn(now)}}, nil
	}
	w.Memory.ForgetFailure(rel.Key)
	log.Info("Helm "+a.verb+" succeeded", "revision", written.Revision, "chart", written.Chart+"-"+written.ChartVersion, "duration", time.Since(started).Round(time.Millisecond))
	w.Events.Eventf(rel.Resource, nil, corev1.EventTypeNormal, a.succeeded, a.verb, "%s revision %d of release %s (chart %s-%s)",
		pastTense(a.verb), written.Revision, written.Name, written.Chart, written.ChartVersion)
	// The storage Secrets Helm wrote are watched: their events bring the
	// next reconcile, once the cache shows them, and it writes the status of
	// the new revision and its objects. A status written now would say less
	// and be replaced a moment later: a write per action that the API server
	// and every watcher of the kind would pay for.
	return Result{Done: true}, nil
}

// labels returns the labels of the revision act writes: the digests it is
// made from, the holder, its number, and "null" for each label to clear.
func labels(w Writer, rel *Release, clear []string) map[string]string {
	l := map[string]string{
		stored.LabelValuesDigest: rel.Facts.Want.Values,
		stored.LabelChartDigest:  rel.Facts.Want.Chart,
		stored.LabelHolder:       w.Holder,
		stored.LabelRevision:     strconv.Itoa(nextRevision(rel)),
		stored.LabelWrittenAt:    strconv.FormatInt(w.Clock.Now().Unix(), 10),
	}
	for _, k := range clear {
		l[k] = "null"
	}
	return l
}

func pastTense(verb string) string {
	if verb == "Upgrade" {
		return "Upgraded to"
	}
	return verb + "ed"
}
