package reconcile

import (
	"context"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/owner"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/storage"
)

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

// act runs a Helm install or upgrade of o's release with o's values and the
// kind's chart, then records in memory what storage must show next (an
// expectation) and what failed (a failure). It never returns a Helm failure
// as an error: the controller's own backoff would retry without bound; the
// failure count memory keeps bounds them.
func (r *Reconciler) act(ctx context.Context, o *observation, a helmAction) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	hc, err := r.helmFor(o)
	if err != nil {
		return ctrl.Result{}, err
	}
	chrt, err := r.Watch.LoadChart() // a fresh copy: Helm edits the chart it renders
	if err != nil {
		return ctrl.Result{}, err
	}
	spec := helm.Spec{
		Name:         o.Release.Name,
		Chart:        chrt,
		Values:       o.values,
		Labels:       r.labels(o, a.clear),
		MaxHistory:   r.Watch.MaxHistory,
		PostRenderer: owner.PostRenderer{Owner: o.Resource, Release: o.Release.Name, Mapper: r.Mapper, Scope: r.access(o).Scope},
	}
	exp := expectation{at: r.now()}
	if o.Facts.Latest != nil {
		exp.before = o.Facts.Latest.UID
	}
	started := time.Now()
	rel, err := a.do(ctx, hc, spec)
	if rel != nil {
		exp.revision, exp.status = rel.Revision, rel.Status
		r.memory.expect(o.key, exp)
		rel = r.mark(ctx, hc, rel)
		r.memory.rememberWritten(o.key, rel)
	}
	if err == nil || !namespaceTerminating(err) {
		r.observeHelm(strings.ToLower(a.verb), started, err)
	}
	if err != nil && namespaceTerminating(err) {
		// Its deletion reaches the custom resource next: nothing failed.
		log.V(1).Info("Helm "+a.verb+" stopped: the namespace is being deleted", "error", err.Error())
		o.done = true
		return ctrl.Result{}, nil
	}
	if err != nil {
		msg := err.Error()
		reason := failureReason(err, a.failed)
		limit := r.Watch.Remediation.MaxAttempts
		fl := r.memory.recordFailure(o.key, o.Facts.Want, reason, msg, r.now())
		log.Error(err, "Helm "+a.verb+" failed", "attempt", fl.Count, "maxAttempts", limit)
		r.Recorder.Eventf(o.Resource, nil, corev1.EventTypeWarning, reason, a.verb, "%s failed (attempt %d of %d): %s", a.verb, fl.Count, limit, msg)
		o.Outcome = &status.Outcome{Phase: status.PhaseFailed, Reason: reason, Message: msg, Failed: true}
		if fl.Count >= limit {
			// The next reconcile holds, or remediates as the kind's policy says.
			return ctrl.Result{RequeueAfter: 250 * time.Millisecond}, nil
		}
		return ctrl.Result{RequeueAfter: fl.RetryIn(r.now())}, nil
	}
	r.memory.forgetFailure(o.key)
	log.Info("Helm "+a.verb+" succeeded", "revision", rel.Revision, "chart", rel.Chart+"-"+rel.ChartVersion, "duration", time.Since(started).Round(time.Millisecond))
	r.Recorder.Eventf(o.Resource, nil, corev1.EventTypeNormal, a.succeeded, a.verb, "%s revision %d of release %s (chart %s-%s)",
		pastTense(a.verb), rel.Revision, rel.Name, rel.Chart, rel.ChartVersion)
	// The storage Secrets Helm wrote are watched: their events bring the
	// next reconcile, once the cache shows them, and it writes the status of
	// the new revision and its objects. A status written now would say less
	// and be replaced a moment later: a write per action that the API server
	// and every watcher of the kind would pay for.
	o.done = true
	return ctrl.Result{}, nil
}

// labels returns the labels of the revision act writes: the digests it is
// made from, the holder, its number, and "null" for each label to clear.
func (r *Reconciler) labels(o *observation, clear []string) map[string]string {
	l := map[string]string{
		storage.LabelValuesDigest: o.Facts.Want.Values,
		storage.LabelChartDigest:  o.Facts.Want.Chart,
		storage.LabelHolder:       r.Holder,
		storage.LabelRevision:     strconv.Itoa(nextRevision(o)),
		storage.LabelWrittenAt:    strconv.FormatInt(r.now().Unix(), 10),
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

// namespaceTerminating reports whether err is the API server's refusal to
// create anything in a namespace being deleted. Helm joins some errors into
// strings, so the message counts as well as the status cause.
func namespaceTerminating(err error) bool {
	return apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) ||
		strings.Contains(err.Error(), "because it is being terminated")
}
