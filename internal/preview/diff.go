package preview

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/identity"
	"github.com/rudder-operator/rudder/internal/watches"
)

// Diff reports what applying objs, custom resources of the kinds rudder
// serves, would do to their releases. It writes nothing: values sources
// and live objects are read, hooks run against a dry-run client, Helm
// renders in a dry run, and each object is applied in a server-side dry
// run. An object of a kind rudder does not serve, a spec that does not
// render, or an object the API server refuses is an error.
func Diff(ctx context.Context, opts Options, objs []*unstructured.Unstructured) (*Report, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	d, err := newDiffer(opts)
	if err != nil {
		return nil, err
	}
	report := &Report{Resources: []Resource{}}
	for _, obj := range objs {
		res, err := d.resource(ctx, obj.DeepCopy())
		if err != nil {
			return nil, fmt.Errorf("%s %s/%s: %w", obj.GetKind(), namespaceOr(obj.GetNamespace(), opts.Namespace), obj.GetName(), err)
		}
		report.Resources = append(report.Resources, res)
	}
	return report, nil
}

// differ holds what the resources of one Diff share.
type differ struct {
	opts   Options
	mapper meta.RESTMapper
	caller client.Client // the caller's own identity
	helm   *helm.Getter
	imp    *identity.Impersonator
}

func newDiffer(opts Options) (*differ, error) {
	httpClient, err := rest.HTTPClientFor(opts.Config)
	if err != nil {
		return nil, err
	}
	mapper, err := apiutil.NewDynamicRESTMapper(opts.Config, httpClient)
	if err != nil {
		return nil, err
	}
	c, err := client.New(opts.Config, client.Options{Scheme: scheme.Scheme, Mapper: mapper})
	if err != nil {
		return nil, err
	}
	hg, err := helm.NewGetter(opts.Config, mapper, logr.Discard(), helm.WithSigningKey(opts.Signatures))
	if err != nil {
		return nil, err
	}
	imp := &identity.Impersonator{Config: opts.Config, Scheme: scheme.Scheme, Mapper: mapper, Default: opts.DefaultServiceAccount,
		Allowed: func(ctx context.Context, ns string) ([]string, error) {
			var n corev1.Namespace
			if err := c.Get(ctx, client.ObjectKey{Name: ns}, &n); err != nil {
				return nil, client.IgnoreNotFound(err)
			}
			return identity.AllowedBy(n.Annotations), nil
		}}
	return &differ{opts: opts, mapper: mapper, caller: c, helm: hg, imp: imp}, nil
}

// watchOf returns the watches entry serving obj's kind.
func (d *differ) watchOf(obj *unstructured.Unstructured) (watches.Watch, error) {
	var known []string
	for _, w := range d.opts.Watches {
		if w.GVK == obj.GroupVersionKind() {
			return w, nil
		}
		known = append(known, w.GVK.Kind+" ("+w.GVK.GroupVersion().String()+")")
	}
	return watches.Watch{}, fmt.Errorf("apiVersion %s, kind %s is not a kind rudder serves; rudder serves: %s",
		obj.GetAPIVersion(), obj.GetKind(), strings.Join(known, ", "))
}

func namespaceOr(ns, def string) string {
	if ns == "" {
		return def
	}
	return ns
}
