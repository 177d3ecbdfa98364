package preview

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/internal/identity"
	"github.com/rudder-operator/rudder/internal/manager"
	"github.com/rudder-operator/rudder/internal/owner"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/redact"
	"github.com/rudder-operator/rudder/internal/storage"
	"github.com/rudder-operator/rudder/internal/values"
	"github.com/rudder-operator/rudder/internal/valuesfrom"
	"github.com/rudder-operator/rudder/internal/watches"
)

// newResourceUID stands for the uid of a resource that does not exist yet,
// in the owner references of its objects: the API server requires one.
const newResourceUID = types.UID("00000000-0000-0000-0000-000000000000")

// resource previews obj, a custom resource as it would be applied.
func (d *differ) resource(ctx context.Context, obj *unstructured.Unstructured) (Resource, error) {
	w, err := d.watchOf(obj)
	if err != nil {
		return Resource{}, err
	}
	obj.SetNamespace(namespaceOr(obj.GetNamespace(), d.opts.Namespace))
	res := Resource{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(),
		Release: w.ReleaseName(obj.GetName()), Objects: []Object{}}
	if err := d.adoptUID(ctx, obj); err != nil {
		return res, err
	}
	if obj.GetAnnotations()[status.AnnotationPaused] == "true" {
		res.Notes = append(res.Notes, fmt.Sprintf("annotation %s is true: the reconciler changes nothing until it is removed", status.AnnotationPaused))
	}
	actor, err := d.imp.ActorFor(ctx, obj)
	if err != nil {
		return res, err
	}
	res.ActingAs = actor.User()
	acting, err := d.acting(actor)
	if err != nil {
		return res, err
	}
	rv, err := d.values(ctx, w, obj, acting, &res)
	red := rv.redact
	if err != nil {
		return res, red.Error(err)
	}
	scope := helm.Scope{Namespace: obj.GetNamespace(), ClusterScoped: w.ClusterScoped}
	hc, err := d.helm.For(helm.Access{Scope: scope, User: actor.User(), Resource: obj.GetUID()})
	if err != nil {
		return res, err
	}
	chrt, err := w.LoadChart()
	if err != nil {
		return res, err
	}
	chartDigest := chrt.Digest()
	rel, err := hc.DryRun(ctx, helm.Spec{Name: res.Release, Chart: chrt, Values: rv.vals,
		PostRenderer: owner.PostRenderer{Owner: obj, Release: res.Release, Mapper: d.mapper, Scope: scope}})
	if errors.Is(err, helm.ErrOperationInProgress) {
		return res, err // the release's state, not the spec's: nothing to judge yet
	}
	if err != nil {
		return res, red.Error(&RenderError{Err: fmt.Errorf("rendering release %s: %w", res.Release, err)})
	}
	deployed, deployedValues, err := hc.Deployed(res.Release)
	if err != nil {
		return res, err
	}
	res.Action, res.Revision = Upgrade, rel.Revision
	switch {
	case rel.Status == "pending-install":
		res.Action = Install
	case deployed != nil && deployed.Labels[storage.LabelValuesDigest] == values.Digest(rv.digested) &&
		deployed.Labels[storage.LabelChartDigest] == chartDigest:
		res.Action, res.Revision = None, 0
	}
	if deployed != nil {
		res.Deployed = deployed.Revision
	}
	m := newMasker(previousSecrets(rv.vals, rv.digested, deployedValues), rv.secrets)
	res.Objects, err = d.objects(ctx, actor, rel, deployed, res.Revision, m)
	for i, n := range res.Notes {
		res.Notes[i] = m.String(n)
	}
	return res, red.Error(err)
}

// adoptUID gives obj the uid of the resource it would update, which the
// owner references of its objects name.
func (d *differ) adoptUID(ctx context.Context, obj *unstructured.Unstructured) error {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	err := d.caller.Get(ctx, client.ObjectKeyFromObject(obj), live)
	switch {
	case apierrors.IsNotFound(err):
		obj.SetUID(newResourceUID)
	case err != nil:
		return fmt.Errorf("reading the resource: %w", err)
	default:
		obj.SetUID(live.GetUID())
	}
	return nil
}

// acting returns the client that reads as actor, the caller's for none.
func (d *differ) acting(actor identity.Actor) (client.Client, error) {
	c, err := d.imp.Client(actor)
	if c == nil || err != nil {
		return d.caller, err
	}
	return c, nil
}

// releaseValues are a resource's release values, as the reconciler computes them.
type releaseValues struct {
	vals map[string]any
	// digested are the values the values digest is computed from: vals,
	// with the parts taken from Secrets replaced by their identity.
	digested map[string]any
	// secrets are the values taken from Secrets, as strings.
	secrets []string
	// redact removes secrets from an error.
	redact *redact.Redactor
}

// values computes obj's release values as the reconciler does: its spec
// with the kind's overrides, over its values sources, then each hook's
// values. Hooks run with a dry-run client: what they would create or change
// is not; a hook that fails adds a note to res, and the values are those
// before it.
func (d *differ) values(ctx context.Context, w watches.Watch, obj *unstructured.Unstructured, acting client.Client,
	res *Resource) (releaseValues, error) {
	var rv releaseValues
	own, err := values.For(obj, w.OverrideValues)
	if err != nil {
		return rv, err
	}
	sources, err := valuesfrom.Sources(w.ValuesFrom, obj.GetAnnotations())
	if err != nil {
		return rv, err
	}
	rv.vals = own
	if len(sources) > 0 {
		read, err := valuesfrom.Read(ctx, acting, obj.GetNamespace(), sources)
		rv.secrets, rv.redact = read.Secrets, redact.New(read.Secrets...)
		if err != nil {
			return rv, fmt.Errorf("reading the release values from ConfigMaps and Secrets: %w", err)
		}
		rv.vals, rv.digested = read.Under(own)
	}
	dry := client.NewDryRunClient(acting)
	registry, err := manager.HooksWith(dry, acting)
	if err != nil {
		return rv, err
	}
	hooks, err := registry.Resolve(w.Hooks)
	if err != nil {
		return rv, err
	}
	hctx := hook.WithActing(ctx, dry)
	for _, h := range hooks {
		out, err := h.Reconcile(hctx, obj, runtime.DeepCopyJSON(rv.vals))
		if err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("hook %s failed in the dry run (%v): the reconciler would retry it, and change nothing until it succeeds",
				h.Name(), rv.redact.Error(err)))
			break
		}
		hook.MergeValues(rv.vals, out.Values)
		if rv.digested != nil {
			hook.MergeValues(rv.digested, out.Values)
		}
	}
	if rv.digested == nil {
		rv.digested = rv.vals
	}
	return rv, nil
}
