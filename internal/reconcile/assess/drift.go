package assess

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/ssa"
)

// Drift is told by field ownership (package ssa): an object has drifted when
// a field rudder applies of the deployed revision, the revision's object
// less the kind's ignored paths, holds another value live or is gone. The API
// server tells which fields those are and what they come to: a dry run of
// rudder's server-side apply runs defaulting and admission, so what a
// mutating admission policy adds, an autoscaler's replicas (when ignored) and
// a sidecar another manager adds to a list are neither drift nor replaced by
// a repair, which is the same apply for real, as the resource's account.
//
// A dry run rather than the live object's managed fields alone: the fields
// Helm's manager applied are Helm's, and a release Helm 3 wrote holds them
// as updates, so until rudder first applies, no managed fields of rudder's
// name what the revision sets. Comparing only rudder's fields of the dry
// run's result, rather than the whole result, keeps what admission would add
// now (a policy created after the object) from counting as drift. The dry run
// is asked only when the live object changed since the last comparison
// (Seen): a resync of unchanged objects makes no request.

// driftCheck is what a comparison of one object with the deployed revision
// found.
type driftCheck struct {
	fields  []string                   // rudder's fields that differ live
	missing bool                       // the object does not exist
	live    *unstructured.Unstructured // the object compared, when not the cached one
	version string                     // the resourceVersion of the object compared
}

// config returns what rudder applies of want.
func (a Assessor) config(want *unstructured.Unstructured) *unstructured.Unstructured {
	return ssa.Config(want, a.Drift.Ignored(want.GetKind(), want.GetName()))
}

// compare returns the fields of want, as rudder applies it, that live does
// not hold, and the object they were compared with: live, or, when the cache
// live comes from is not at the version the dry run started from, the object
// read from the API server (nil when gone). An object the API server cannot
// apply (a chart's list with a duplicate key, which an update accepts) is
// logged and counted as matching.
func (a Assessor) compare(ctx context.Context, t *Target, want, live *unstructured.Unstructured) ([]string, *unstructured.Unstructured, error) {
	writer, err := a.writer(t)
	if err != nil {
		return nil, nil, err
	}
	driftComparisons.WithLabelValues(a.Kind).Inc()
	applied, err := ssa.Apply(ctx, writer, a.config(want), true)
	if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
		ctrl.LoggerFrom(ctx).Info("Cannot compare object with its revision by server-side apply; drift is not detected for it",
			"object", want.GetKind()+"/"+want.GetName(), "error", err.Error())
		return nil, live, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("comparing %s/%s with a dry run of its revision: %w", want.GetKind(), want.GetName(), err)
	}
	if applied.GetResourceVersion() != live.GetResourceVersion() {
		if live, err = a.read(ctx, a.APIReader, want); live == nil || err != nil {
			return nil, nil, err
		}
	}
	fields, err := ssa.Drift(applied, live)
	if err != nil {
		return nil, nil, fmt.Errorf("comparing %s/%s with its revision: %w", want.GetKind(), want.GetName(), err)
	}
	return fields, live, nil
}

// putBack applies want again, as the resource's account, and returns the
// object as it now is. check says what differed, for the event.
func (a Assessor) putBack(ctx context.Context, t *Target, want *unstructured.Unstructured, check driftCheck) (*unstructured.Unstructured, error) {
	ref := want.GetKind() + "/" + want.GetName()
	writer, err := a.writer(t)
	if err != nil {
		return nil, err
	}
	live, err := ssa.Apply(ctx, writer, a.config(want), false)
	if err != nil {
		return nil, a.repairFailed(t, ref, err)
	}
	switch {
	case check.missing:
		a.repaired(ctx, t, want, "deleted", nil)
	case live.GetResourceVersion() != check.version:
		a.repaired(ctx, t, want, "changed", check.fields)
	}
	return live, nil
}

// driftEntry names an object that differs, and how, in the Drifted
// condition: Deployment/web (spec.replicas), or Deployment/web (deleted).
func driftEntry(want *unstructured.Unstructured, check driftCheck) string {
	how := "deleted"
	if !check.missing {
		how = strings.Join(check.fields, ", ")
	}
	return fmt.Sprintf("%s/%s (%s)", want.GetKind(), want.GetName(), how)
}

// repaired records that obj was put back, naming the fields that differed.
// The object is the event's related object, so that events about two
// objects are not merged into one series.
func (a Assessor) repaired(ctx context.Context, t *Target, obj *unstructured.Unstructured, how string, fields []string) {
	ref := obj.GetKind() + "/" + obj.GetName()
	ctrl.LoggerFrom(ctx).Info("Put back object "+how+" outside Helm", "object", ref, "fields", fields)
	driftRepairs.WithLabelValues(a.Kind, obj.GetKind()).Inc()
	msg := fmt.Sprintf("Put back %s, %s outside its release", ref, how)
	if len(fields) > 0 {
		msg += ": " + strings.Join(fields, ", ")
	}
	a.Events.Eventf(t.Resource, obj, corev1.EventTypeNormal, status.ReasonDriftRepaired, "Repair", "%s", msg)
}

func (a Assessor) repairFailed(t *Target, ref string, err error) error {
	if helm.NamespaceTerminating(err) {
		return err // no event: the namespace's deletion reaches the resource next
	}
	a.Events.Eventf(t.Resource, nil, corev1.EventTypeWarning, status.ReasonDriftRepairFail, "Repair", "Cannot put back %s: %s", ref, err.Error())
	return fmt.Errorf("putting back %s: %w", ref, err)
}

// driftOf compares want's live counterpart, cached (nil when the cache has
// none), with the revision, by what seen holds when cached has not changed
// since it was last compared.
func (a Assessor) driftOf(ctx context.Context, t *Target, want *unstructured.Unstructured, cached client.Object, seen *Seen) (driftCheck, error) {
	gvk := want.GroupVersionKind()
	if cached == nil {
		// The cache may be behind, or the object may lack the label the
		// cache selects on (an older rudder wrote it).
		live, err := a.read(ctx, a.APIReader, want)
		if err != nil || live == nil {
			return driftCheck{missing: live == nil}, err
		}
		fields, live, err := a.compare(ctx, t, want, live)
		if err != nil || live == nil {
			return driftCheck{missing: err == nil}, err
		}
		return driftCheck{fields: fields, live: live, version: live.GetResourceVersion()}, nil
	}
	at := pointOf(want, cached, gvk.GroupKind())
	if fields, ok := seen.driftAt(cached, at); ok {
		return driftCheck{fields: fields, version: cached.GetResourceVersion()}, nil
	}
	live, err := toUnstructured(cached, gvk)
	if err != nil {
		return driftCheck{}, fmt.Errorf("converting %s %s: %w", gvk.Kind, want.GetName(), err)
	}
	fields, now, err := a.compare(ctx, t, want, live)
	switch {
	case err != nil:
		return driftCheck{}, err
	case now == nil:
		return driftCheck{missing: true}, nil
	case now.GetUID() == cached.GetUID():
		// The comparison holds for the object compared: the cached one, or
		// the API server's when the cache was behind (a rollout's status),
		// which the cache shows next.
		seen.recordDrift(now, pointOf(want, now, gvk.GroupKind()), fields)
	}
	return driftCheck{fields: fields, live: now, version: now.GetResourceVersion()}, nil
}
