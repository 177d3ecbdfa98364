package manager

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// newRecorder returns rudder's event recorder, whose broadcaster runs with
// mgr. Its events go to the events API as controller-runtime's would, except
// those the API server refuses because their namespace is being deleted:
// deleting a namespace of many WebApps otherwise logs an error line with a
// stack trace for each event, which nobody can read any more.
func newRecorder(mgr manager.Manager, cs kubernetes.Interface, scheme *runtime.Scheme) (events.EventRecorder, error) {
	b := events.NewBroadcaster(quietSink{&events.EventSinkImpl{Interface: cs.EventsV1()}})
	err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
			return err
		}
		<-ctx.Done()
		b.Shutdown()
		return nil
	}))
	if err != nil {
		return nil, err
	}
	return b.NewRecorder(scheme, "rudder"), nil
}

// quietSink drops the events of a namespace being deleted, as written.
type quietSink struct{ events.EventSink }

func (s quietSink) Create(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	out, err := s.EventSink.Create(ctx, e)
	return dropTerminating(ctx, out, err)
}

func (s quietSink) Update(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	out, err := s.EventSink.Update(ctx, e)
	return dropTerminating(ctx, out, err)
}

func (s quietSink) Patch(ctx context.Context, old *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	out, err := s.EventSink.Patch(ctx, old, data)
	return dropTerminating(ctx, out, err)
}

// dropTerminating turns the API server's refusal of an event in a namespace
// being deleted into success, logged at debug level.
func dropTerminating(ctx context.Context, e *eventsv1.Event, err error) (*eventsv1.Event, error) {
	if err != nil && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		ctrl.LoggerFrom(ctx).V(1).Info("Dropped an event of a namespace being deleted", "error", err.Error())
		return nil, nil
	}
	return e, err
}
