package reconcile

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/rudder-operator/rudder/internal/apicalls"
	"github.com/rudder-operator/rudder/internal/depends"
	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/internal/identity"
	"github.com/rudder-operator/rudder/internal/reconcile/assess"
	"github.com/rudder-operator/rudder/internal/reconcile/enqueue"
	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/signature"
	"github.com/rudder-operator/rudder/internal/stored"
	"github.com/rudder-operator/rudder/internal/watches"
)

// Reconciler reconciles the custom resources of one watched kind into Helm
// releases, one release per custom resource.
type Reconciler struct {
	// Watch is the kind and the chart that serves it.
	Watch watches.Watch
	// Kinds are every kind rudder serves: what a depends-on annotation may
	// name. None: the annotation is not read.
	Kinds depends.Kinds
	// Client reads the custom resources and the releases' objects from the
	// manager's cache, and writes them.
	Client client.Client
	// Storage caches the metadata of Helm's storage Secrets (stored.NewCache):
	// the reconciler reads release history from it, and a change of a
	// release's Secrets, by rudder or by hand, reconciles its custom resource.
	Storage cache.Cache
	// Dependents caches the objects of the releases (owner.NewCache): the
	// reconciler reads them from it and watches their kinds through it.
	Dependents cache.Cache
	// APIReader reads from the API server, for the rare object the caches
	// cannot show, and the values sources of a resource.
	APIReader client.Reader
	// Sources caches the identity of ConfigMaps and Secrets
	// (valuesfrom.NewCache), so that a change of one a resource takes values
	// from reconciles it. Nil: valuesFrom and its annotation are refused.
	Sources cache.Cache
	// Helm runs Helm actions and reads stored revisions.
	Helm *helm.Getter
	// Impersonator says whom rudder acts as for each resource, and hands out
	// clients acting so; nil: rudder acts as itself for every resource.
	Impersonator *identity.Impersonator
	// Signatures tells the revisions rudder signed for a resource (Helm
	// signs with the same key); nil: every revision counts as signed.
	Signatures *signature.Key
	// Namespaces are those the manager's cache holds; nil: all.
	Namespaces []string
	// Mapper tells namespaced kinds from cluster-scoped ones.
	Mapper meta.RESTMapper
	// Recorder records the events of each custom resource.
	Recorder events.EventRecorder
	// Clock is the time source; the real clock when nil.
	Clock clock.PassiveClock
	// Hooks run on every reconcile of this kind, in order (watches.yaml hooks).
	Hooks []hook.Hook
	// Holder identifies this process on the revisions it writes (LabelHolder):
	// unique per process, a valid label value.
	Holder string
	// Holders tells whether the process that left a revision pending still
	// runs (lease.Checker); nil counts every other process as gone.
	Holders interface {
		Alive(ctx context.Context, holder string) (bool, error)
	}
	// Lease is this process's Lease (lease.Lease), held while a step runs
	// a Helm action that may leave a revision pending; nil holds nothing.
	Lease interface {
		Hold(ctx context.Context) (done func(), err error)
	}
	// NoCaches turns off what the reconciler keeps between reconciles only
	// to save reads and decodes (memory's revisionCache): every reconcile
	// then reads and decodes what it needs from storage.
	NoCaches bool
	// Rollout stages a change of the kind's chart (rollout.Runner); nil:
	// every resource runs the kind's chart at once.
	Rollout Rollout

	chartDigest string
	promotions  chan event.GenericEvent // the resources a rollout promoted or took back
	watcher     *enqueue.Dependents
	sources     sourceWatcher
	memory      memory                  // what is remembered of each resource between reconciles
	steps       map[plan.Step]step      // the steps that write a release (package action)
	assessor    assess.Assessor         // the deployed revisions' live objects: readiness, drift
	testsDone   chan event.GenericEvent // the end of each chart test run
}

// Reconcile observes one custom resource and its release, runs one step and
// writes status once.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.newObject()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.memory.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// A resource that left the selector keeps its release; one being deleted
	// with rudder's finalizer is uninstalled all the same.
	if !r.Watch.Selector.Matches(labels.Set(obj.GetLabels())) &&
		(obj.GetDeletionTimestamp().IsZero() || !controllerutil.ContainsFinalizer(obj, Finalizer)) {
		r.unselected(obj)
		return ctrl.Result{}, nil
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("release", r.Watch.ReleaseName(obj.GetName())))
	if obj.GetDeletionTimestamp().IsZero() && !controllerutil.ContainsFinalizer(obj, Finalizer) {
		if err := r.addFinalizer(apicalls.WithStep(ctx, "finalizer"), obj); err != nil {
			return ctrl.Result{}, err
		}
	}
	o, err := r.observe(apicalls.WithStep(ctx, "observe"), obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	st := plan.Plan(o.Facts)
	if st == plan.StepUpgrade {
		if o.Gate = r.gate(ctx, o); o.Gate != nil {
			st = plan.StepGated
		}
	}
	o.Step = st
	defer func(started time.Time) {
		reconcileSeconds.WithLabelValues(r.Watch.GVK.Kind, string(st)).Observe(time.Since(started).Seconds())
	}(time.Now())
	ctrl.LoggerFrom(ctx).V(1).Info("Planned step", "step", st)
	if err := st.Check(o.Facts); err != nil {
		return ctrl.Result{}, err // a bug in plan; TestPlan_EveryHistory guards it
	}
	r.reportOutOfBand(ctx, o)
	if st != plan.StepUninstall && st != plan.StepNone && o.Facts.ActorErr == nil {
		r.assess(apicalls.WithStep(ctx, "assess"), o, false) // the serving revision's health, whatever the step does
	}
	if st.WritesRevision() && r.Lease != nil {
		done, err := r.Lease.Hold(ctx)
		if err != nil {
			return ctrl.Result{}, err
		}
		defer done()
	}
	res, err := r.run(apicalls.WithStep(ctx, string(st)), st, o)
	if err != nil && helm.NamespaceTerminating(err) {
		// A repair or a hook met the namespace's deletion, which reaches
		// this resource next: not an error of the release.
		ctrl.LoggerFrom(ctx).V(1).Info("Step stopped: the namespace is being deleted", "step", st, "error", err.Error())
		return ctrl.Result{}, nil
	}
	res = withHookRequeue(res, o)
	if o.done {
		return res, err
	}
	wait, serr := r.writeStatus(apicalls.WithStep(ctx, "status"), o)
	if serr != nil && err == nil {
		err = serr
	}
	return requeueWithin(res, wait), err
}

// requeueWithin returns res, asking to be requeued within d when d is not 0.
func requeueWithin(res ctrl.Result, d time.Duration) ctrl.Result {
	if d > 0 && (res.RequeueAfter == 0 || d < res.RequeueAfter) {
		res.RequeueAfter = d
	}
	return res
}

// run runs step st: one of package action's when it acts on the release.
func (r *Reconciler) run(ctx context.Context, st plan.Step, o *observation) (ctrl.Result, error) {
	if s, ok := r.steps[st]; ok {
		return r.runStep(ctx, st, s, o)
	}
	switch st {
	case plan.StepBlocked:
		return ctrl.Result{}, o.Facts.HookErr // the controller's backoff retries the hook
	case plan.StepWait:
		// Only a wait for storage to catch up has nothing new to say.
		o.done = !o.Facts.CaughtUp || o.Facts.RetryIn == 0 && (o.Facts.Latest == nil || !plan.IsPending(o.Facts.Latest.Status)) && !plan.AwaitsOutOfBand(o.Facts)
		return ctrl.Result{RequeueAfter: r.waitFor(o)}, nil
	case plan.StepPaused:
		return ctrl.Result{}, nil // assessed above; the annotation's removal is an event
	case plan.StepDepend:
		return r.dependsOn(o)
	case plan.StepGated:
		return r.held(o)
	default: // plan.StepInvalid, plan.StepHold: only a change of spec or chart helps
		return ctrl.Result{RequeueAfter: r.Watch.ReconcilePeriod}, nil
	}
}

// waitFor returns when to look again at a release that is not ours to touch yet.
func (r *Reconciler) waitFor(o *observation) time.Duration {
	switch {
	case o.Facts.RetryIn > 0:
		return o.Facts.RetryIn
	case o.Facts.Latest != nil && plan.IsPending(o.Facts.Latest.Status), plan.AwaitsOutOfBand(o.Facts):
		return 5 * time.Second
	default:
		// Storage has not caught up with our last action: the event of its
		// Secret ends the wait; the expectation expires at the latest.
		return expectationTTL
	}
}

// unselected leaves a resource the watch's selector does not match as it
// is. One with a release (rudder's finalizer) is told that its release is no
// longer upgraded or repaired, and that its deletion still uninstalls it.
func (r *Reconciler) unselected(obj *unstructured.Unstructured) {
	r.memory.Forget(keyOf(obj))
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		return
	}
	r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, status.ReasonUnselected, "Unselect",
		"The labels no longer match the selector of kind %s in watches.yaml: release %s stays as it is, not upgraded or repaired; deleting the %s still uninstalls it",
		r.Watch.GVK.Kind, r.Watch.ReleaseName(obj.GetName()), r.Watch.GVK.Kind)
}

func (r *Reconciler) addFinalizer(ctx context.Context, obj *unstructured.Unstructured) error {
	orig := obj.DeepCopy()
	controllerutil.AddFinalizer(obj, Finalizer)
	if err := r.Client.Patch(ctx, obj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("adding finalizer %s: %w", Finalizer, err)
	}
	return nil
}

func (r *Reconciler) newObject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(r.Watch.GVK)
	return u
}

func (r *Reconciler) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}

func keyOf(obj client.Object) types.NamespacedName {
	return types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// SetupWithManager registers the reconciler as a controller of mgr. The chart
// is loaded once here so that a broken chart stops the manager at start.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	chrt, err := r.Watch.LoadChart()
	if err != nil {
		return fmt.Errorf("kind %s: %w", r.Watch.GVK.Kind, err)
	}
	r.chartDigest = r.Watch.ChartDigest(chrt.Digest())
	r.memory.noCache = r.NoCaches
	r.initSeries()
	r.testsDone = make(chan event.GenericEvent)
	r.promotions = make(chan event.GenericEvent)
	if err := r.registerCollector(); err != nil {
		return fmt.Errorf("kind %s: %w", r.Watch.GVK.Kind, err)
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named(r.Watch.GVK.Kind).
		For(r.newObject(), builder.WithPredicates(enqueue.Resources(r.Watch.Selector, Finalizer))).
		WatchesRawSource(source.Kind[client.Object](r.Storage, stored.Object(), r.releaseHandler())).
		WatchesRawSource(source.Channel(r.testsDone, &handler.EnqueueRequestForObject{})).
		WatchesRawSource(source.Channel(r.promotions, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Watch.MaxConcurrentReconciles})
	r.watchHooks(mgr.GetCache(), b)
	r.watchNamespaces(b)
	if err := r.watchDependencies(mgr, b); err != nil {
		return fmt.Errorf("kind %s: watching dependencies: %w", r.Watch.GVK.Kind, err)
	}
	r.Recorder = redactingRecorder{EventRecorder: r.Recorder, memory: &r.memory}
	r.assessor = assess.Assessor{Kind: r.Watch.GVK.Kind, Drift: r.Watch.Drift, Cache: r.Dependents, APIReader: r.APIReader,
		Client: r.Client, Impersonator: r.Impersonator, Events: r.Recorder}
	c, err := b.Build(redactingReconciler{r})
	if err != nil {
		return fmt.Errorf("kind %s: building controller: %w", r.Watch.GVK.Kind, err)
	}
	if err := r.watchSources(mgr, c); err != nil {
		return fmt.Errorf("kind %s: indexing values sources: %w", r.Watch.GVK.Kind, err)
	}
	r.watcher = &enqueue.Dependents{Controller: c, Cache: r.Dependents, Scheme: mgr.GetScheme(), Owner: r.Watch.GVK.GroupKind(), Enabled: r.Watch.WatchDependentResources}
	r.steps = r.newSteps()
	return nil
}

// Finalizer keeps a custom resource until its release is uninstalled.
const Finalizer = "rudder.dev/release"
