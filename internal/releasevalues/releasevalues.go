package releasevalues

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/internal/values"
	"github.com/rudder-operator/rudder/internal/valuesfrom"
)

// Pipeline computes the release values of one kind's resources.
type Pipeline struct {
	// Overrides are the kind's overrideValues ("a.b.c" → value), set over
	// each resource's spec.
	Overrides map[string]string
	// Sources are the kind's valuesFrom, read before those a resource's
	// annotation names.
	Sources []valuesfrom.Source
}

// Values are a release's values as the pipeline computed them so far.
type Values struct {
	// Values are what the release is installed or upgraded with.
	Values map[string]any
	// Digested is what the values digest is computed from when a Secret was
	// read: Values with the Secret's part replaced by its identity and
	// version. Nil: the digest is of Values.
	Digested map[string]any
	// Secrets are the values taken from Secrets, as strings, for a redactor
	// (package redact): no condition, Event, log line or error shows them.
	Secrets []string
}

// Digest is the values digest: of Digested when a Secret was read, else of
// Values.
func (v Values) Digest() string {
	if v.Digested != nil {
		return values.Digest(v.Digested)
	}
	return values.Digest(v.Values)
}

// Own returns obj's own values, the pipeline's first step: its spec with the
// kind's overrides on top.
func (p Pipeline) Own(obj *unstructured.Unstructured) (Values, error) {
	vals, err := values.For(obj, p.Overrides)
	return Values{Values: vals}, err
}

// SourcesOf returns the sources obj's values are read from: the kind's, then
// those its annotation names. An error names the annotation and its fix.
func (p Pipeline) SourcesOf(obj *unstructured.Unstructured) ([]valuesfrom.Source, error) {
	return valuesfrom.Sources(p.Sources, obj.GetAnnotations())
}

// Read is the pipeline's second step: it puts v, obj's own values, over
// those of sources, read from obj's namespace with reader (as the account
// rudder acts as for obj). The values taken from Secrets are in the result
// even when it fails, so that the caller's error shows none of them. A
// problem of the sources themselves is valuesfrom.Fixable.
func (p Pipeline) Read(ctx context.Context, reader client.Reader, obj *unstructured.Unstructured, sources []valuesfrom.Source, v Values) (Values, error) {
	if len(sources) == 0 {
		return v, nil
	}
	read, err := valuesfrom.Read(ctx, reader, obj.GetNamespace(), sources)
	v.Secrets = read.Secrets
	if err != nil {
		return v, err
	}
	v.Values, v.Digested = read.Under(v.Values)
	return v, nil
}

// Ran is told how a hook's run ended, before its values are merged; it
// returns whether the pipeline goes on: false stops it before the hook's
// values are merged and the next hooks run.
type Ran func(h hook.Hook, res hook.Result, err error) (goOn bool)

// RunHooks is the pipeline's last step: each hook in order gets a copy of
// the values so far and its own values are merged over them, while ran says
// to go on. ctx carries the client the hooks write with (hook.WithActing).
func (p Pipeline) RunHooks(ctx context.Context, obj *unstructured.Unstructured, hooks []hook.Hook, v *Values, ran Ran) {
	for _, h := range hooks {
		res, err := h.Reconcile(ctx, obj, runtime.DeepCopyJSON(v.Values))
		if !ran(h, res, err) {
			return
		}
		v.Merge(res.Values)
	}
}

// Merge merges a hook's values over v's (maps merge, other values replace),
// and over what the digest is computed from.
func (v *Values) Merge(hookValues map[string]any) {
	hook.MergeValues(v.Values, hookValues)
	if v.Digested != nil {
		hook.MergeValues(v.Digested, hookValues)
	}
}
