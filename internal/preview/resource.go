package preview

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/internal/identity"
	"github.com/rudder-operator/rudder/internal/manager"
	"github.com/rudder-operator/rudder/internal/owner"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/redact"
	"github.com/rudder-operator/rudder/internal/releasevalues"
	"github.com/rudder-operator/rudder/internal/stored"
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
	chartDigest := w.ChartDigest(chrt.Digest())
	rel, err := hc.DryRun(ctx, helm.Spec{Name: res.Release, Chart: chrt, Values: rv.vals.Values,
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
	case deployed != nil && deployed.Labels[stored.LabelValuesDigest] == rv.vals.Digest() &&
		deployed.Labels[stored.LabelChartDigest] == chartDigest:
		res.Action, res.Revision = None, 0
	}
	if deployed != nil {
		res.Deployed = deployed.Revision
	}
	m := newMasker(previousSecrets(rv.vals.Values, rv.vals.Digested, deployedValues), rv.vals.Secrets)
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

// releaseValues are a resource's release values, as the reconciler computes
// them, and the redactor of the values taken from Secrets.
type releaseValues struct {
	vals   releasevalues.Values
	redact *redact.Redactor
}

// values computes obj's release values with its kind's pipeline, as the
// reconciler does. Hooks run with a dry-run client: what they would create or
// change is not; a hook that fails adds a note to res, and the values are
// those before it.
func (d *differ) values(ctx context.Context, w watches.Watch, obj *unstructured.Unstructured, acting client.Client,
	res *Resource) (releaseValues, error) {
	p := w.Values()
	own, err := p.Own(obj)
	if err != nil {
		return releaseValues{vals: own}, err
	}
	sources, err := p.SourcesOf(obj)
	if err != nil {
		return releaseValues{vals: own}, err
	}
	vals, err := p.Read(ctx, acting, obj, sources, own)
	rv := releaseValues{vals: vals, redact: redact.New(vals.Secrets...)}
	if err != nil {
		return rv, fmt.Errorf("reading the release values from ConfigMaps and Secrets: %w", err)
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
	p.RunHooks(hook.WithActing(ctx, dry), obj, hooks, &rv.vals, func(h hook.Hook, _ hook.Result, err error) bool {
		if err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("hook %s failed in the dry run (%v): the reconciler would retry it, and change nothing until it succeeds",
				h.Name(), rv.redact.Error(err)))
		}
		return err == nil
	})
	return rv, nil
}
