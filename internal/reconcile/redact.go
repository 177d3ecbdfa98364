package reconcile

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rudder-operator/rudder/internal/redact"
)

// setSecrets records the Redactor of the values key's reconcile took from
// Secrets (readValuesFrom), for its logs, events, status and error. It
// lives as long as the reconcile: redactingReconciler drops it.
func (m *memory) setSecrets(key types.NamespacedName, r *redact.Redactor) {
	if r.Empty() {
		m.dropSecrets(key)
		return
	}
	m.update(key, func(e *entry) { e.secrets = r })
}

// dropSecrets forgets the Redactor of key's reconcile.
func (m *memory) dropSecrets(key types.NamespacedName) {
	m.lookup(key, func(e *entry) { e.secrets = nil })
}

// secretsOf returns the Redactor of key's reconcile; nil (redacting
// nothing) when it read no Secret.
func (m *memory) secretsOf(key types.NamespacedName) *redact.Redactor {
	var r *redact.Redactor
	m.lookup(key, func(e *entry) { r = e.secrets })
	return r
}

// redactingReconciler runs the reconciles of r, removes the values taken
// from Secrets from the error one returns (controller-runtime logs it), and
// forgets them.
type redactingReconciler struct{ r *Reconciler }

// Reconcile implements reconcile.Reconciler. The reconcile logs through a
// logger that redacts what it writes (redactingSink).
func (x redactingReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	defer x.r.memory.dropSecrets(req.NamespacedName)
	of := func() *redact.Redactor { return x.r.memory.secretsOf(req.NamespacedName) }
	ctx = ctrl.LoggerInto(ctx, logr.New(newRedactingSink(ctrl.LoggerFrom(ctx).GetSink(), of)))
	res, err := x.r.Reconcile(ctx, req)
	return res, of().Error(err)
}

// redactingSink writes log lines of which the values a reconcile took from
// Secrets are removed: from the message, the error and the string values.
// It asks red at each line, since the values are known only once read.
type redactingSink struct {
	logr.LogSink
	red func() *redact.Redactor
}

func newRedactingSink(sink logr.LogSink, red func() *redact.Redactor) logr.LogSink {
	if sink == nil {
		return nil
	}
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		sink = cd.WithCallDepth(1) // the frame of this sink's own method
	}
	return redactingSink{LogSink: sink, red: red}
}

// Init implements logr.LogSink. The sink wrapped was initialized by the
// logger it came from; newRedactingSink accounts for this sink's frame.
func (s redactingSink) Init(logr.RuntimeInfo) {}

// Info implements logr.LogSink.
func (s redactingSink) Info(level int, msg string, kv ...any) {
	red := s.red()
	s.LogSink.Info(level, red.String(msg), redactValues(red, kv)...)
}

// Error implements logr.LogSink.
func (s redactingSink) Error(err error, msg string, kv ...any) {
	red := s.red()
	s.LogSink.Error(red.Error(err), red.String(msg), redactValues(red, kv)...)
}

// WithValues implements logr.LogSink.
func (s redactingSink) WithValues(kv ...any) logr.LogSink {
	return redactingSink{LogSink: s.LogSink.WithValues(redactValues(s.red(), kv)...), red: s.red}
}

// WithName implements logr.LogSink.
func (s redactingSink) WithName(name string) logr.LogSink {
	return redactingSink{LogSink: s.LogSink.WithName(name), red: s.red}
}

func redactValues(red *redact.Redactor, kv []any) []any {
	if red.Empty() {
		return kv
	}
	out := make([]any, len(kv))
	for i, v := range kv {
		switch t := v.(type) {
		case string:
			out[i] = red.String(t)
		case error:
			out[i] = red.Error(t)
		default:
			out[i] = v
		}
	}
	return out
}

var _ reconcile.Reconciler = redactingReconciler{}

// redactingRecorder records events of which the values the regarding
// resource's reconcile took from Secrets are removed.
type redactingRecorder struct {
	events.EventRecorder
	memory *memory
}

// Eventf implements events.EventRecorder.
func (e redactingRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if m, err := meta.Accessor(regarding); err == nil {
		if red := e.memory.secretsOf(types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()}); !red.Empty() {
			e.EventRecorder.Eventf(regarding, related, eventtype, reason, action, "%s", red.String(fmt.Sprintf(note, args...)))
			return
		}
	}
	e.EventRecorder.Eventf(regarding, related, eventtype, reason, action, note, args...)
}

// redactAll returns v (a status as a JSON object) with red's redaction of
// each of its strings. v is not changed: its maps may be the cached
// resource's.
func redactAll(v any, red *redact.Redactor) any {
	if red.Empty() {
		return v
	}
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = redactAll(e, red)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = redactAll(e, red)
		}
		return out
	case string:
		return red.String(t)
	}
	return v
}
