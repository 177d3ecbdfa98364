package reconcile

import (
	"context"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/redact"
	"github.com/rudder-operator/rudder/internal/valuesfrom"
)

// valuesFromIndex indexes the custom resources of a kind by the sources
// their annotation names: "Kind/namespace/name".
const valuesFromIndex = "rudder.dev/values-from"

// readValuesFrom puts the values of o's sources (its kind's, then its
// annotation's) under its spec's, and keeps what the values digest is
// computed from when a Secret is among them, and, for the rest of the
// reconcile, the values taken from Secrets, which no condition, Event or
// error it returns shows (memory.setSecrets). A problem of the sources
// themselves is a valuesFromError; any other error is a failure to read them.
func (r *Reconciler) readValuesFrom(ctx context.Context, o *observation) error {
	p := r.Watch.Values()
	sources, err := p.SourcesOf(o.Resource)
	if err != nil {
		return status.ValuesFromError{Err: err}
	}
	if len(sources) == 0 {
		return nil
	}
	if err := r.sources.start(); err != nil {
		return err
	}
	reader, err := r.actingReader(o, r.APIReader)
	if err != nil {
		return err
	}
	vals, err := p.Read(ctx, reader, o.Resource, sources, o.values)
	r.memory.setSecrets(o.key, redact.New(vals.Secrets...))
	if valuesfrom.Fixable(err) {
		return status.ValuesFromError{Err: err}
	}
	if apierrors.IsForbidden(err) {
		// The account rudder acts as may not read a source: no retry helps
		// until its Role or the sources change.
		return status.ConditionError{Reason: status.ReasonForbidden, Err: fmt.Errorf("reading the release values from ConfigMaps and Secrets: %w", err)}
	}
	if err != nil {
		return err
	}
	o.values = vals
	return nil
}

// sourceWatcher starts, on the first resource with sources, the watches that
// reconcile a resource when one of its sources changes.
type sourceWatcher struct {
	once  sync.Once
	err   error
	watch func() error
}

func (w *sourceWatcher) start() error {
	if w.watch == nil {
		return fmt.Errorf("values from ConfigMaps and Secrets are not set up")
	}
	w.once.Do(func() { w.err = w.watch() })
	return w.err
}

// watchSources indexes the kind's resources by their own sources and sets up
// the watches of the sources' objects, started on first use.
func (r *Reconciler) watchSources(mgr ctrl.Manager, c controller.Controller) error {
	r.sources.watch = func() error {
		for _, kind := range valuesfrom.Kinds {
			if err := c.Watch(source.Kind[client.Object](r.Sources, valuesfrom.Object(kind), handler.EnqueueRequestsFromMapFunc(r.readersOf(kind)))); err != nil {
				return fmt.Errorf("watching %ss for values: %w", kind, err)
			}
		}
		return nil
	}
	if r.Sources == nil {
		r.sources.watch = nil
		return nil
	}
	return mgr.GetFieldIndexer().IndexField(context.Background(), r.newObject(), valuesFromIndex, func(obj client.Object) []string {
		sources, err := valuesfrom.Sources(nil, obj.GetAnnotations())
		if err != nil {
			return nil
		}
		keys := make([]string, len(sources))
		for i, s := range sources {
			keys[i] = s.Kind + "/" + obj.GetNamespace() + "/" + s.Name
		}
		return keys
	})
}

// readersOf maps a ConfigMap or Secret to the resources of this kind that
// take values from it: all of its namespace when the kind's sources name it,
// else those whose annotation does.
func (r *Reconciler) readersOf(kind string) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		key := kind + "/" + obj.GetNamespace() + "/" + obj.GetName()
		if slices.ContainsFunc(r.Watch.ValuesFrom, func(s valuesfrom.Source) bool { return s.Kind == kind && s.Name == obj.GetName() }) {
			return r.requests(ctx, "take values from "+key, client.InNamespace(obj.GetNamespace()))
		}
		return r.requests(ctx, "take values from "+key, client.MatchingFields{valuesFromIndex: key})
	}
}
