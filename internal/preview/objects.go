package preview

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/identity"
)

// Helm's marks on every object of a release (its setMetadataVisitor), which
// the rendered manifest lacks: an object applied without them would lose them.
const (
	helmManagedBy        = "app.kubernetes.io/managed-by"
	helmReleaseName      = "meta.helm.sh/release-name"
	helmReleaseNamespace = "meta.helm.sh/release-namespace"
)

// objects compares each object of rel, the revision the release would
// become (number revision; 0 when the release keeps its deployed one), with
// the live one, and lists the objects of deployed (nil for none) that the
// new revision drops, which Helm would delete. Reads and dry runs act as actor.
func (d *differ) objects(ctx context.Context, actor identity.Actor, rel *helm.Release, deployed *helm.Release, revision int, m *masker) ([]Object, error) {
	dyn, err := dynamic.NewForConfig(d.imp.RESTConfig(actor))
	if err != nil {
		return nil, err
	}
	rendered, err := d.parse(rel)
	if err != nil {
		return nil, err
	}
	to := "(dry run)"
	if revision > 0 {
		to = fmt.Sprintf("(revision %d)", revision)
	}
	out := []Object{}
	kept := map[string]bool{}
	for _, obj := range rendered {
		kept[key(obj)] = true
		o, err := d.object(ctx, dyn, obj, to, m)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	if deployed != nil {
		old, err := d.parse(deployed)
		if err != nil {
			return nil, err
		}
		for _, obj := range old {
			if kept[key(obj)] || helm.Kept(obj.GetAnnotations()) {
				continue
			}
			o, found, err := d.deleted(ctx, dyn, obj, to, m)
			if err != nil {
				return nil, err
			}
			if found {
				out = append(out, o)
			}
		}
	}
	sortObjects(out)
	return out, nil
}

// parse returns the objects of rel's manifest as Helm applies them: in the
// release's namespace when namespaced, with Helm's marks.
func (d *differ) parse(rel *helm.Release) ([]*unstructured.Unstructured, error) {
	objs, err := helm.ParseManifest(rel.Manifest)
	if err != nil {
		return nil, fmt.Errorf("revision %d of release %s: %w", rel.Revision, rel.Name, err)
	}
	for _, obj := range objs {
		if obj.GetNamespace() == "" && d.namespaced(obj.GroupVersionKind()) {
			obj.SetNamespace(rel.Namespace)
		}
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[helmManagedBy] = "Helm"
		obj.SetLabels(labels)
		ann := obj.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[helmReleaseName], ann[helmReleaseNamespace] = rel.Name, rel.Namespace
		obj.SetAnnotations(ann)
	}
	return objs, nil
}

func (d *differ) namespaced(gvk schema.GroupVersionKind) bool {
	m, err := d.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil && m.Scope.Name() == meta.RESTScopeNameNamespace
}

// resourceOf returns the client of obj's resource.
func (d *differ) resourceOf(dyn dynamic.Interface, obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	m, err := d.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref(obj), err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return dyn.Resource(m.Resource).Namespace(obj.GetNamespace()), nil
	}
	return dyn.Resource(m.Resource), nil
}

// object dry-runs the apply of obj and compares the result with the live
// object: for an object that exists, only the fields the apply would own.
func (d *differ) object(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured, to string, m *masker) (Object, error) {
	ri, err := d.resourceOf(dyn, obj)
	if err != nil {
		return Object{}, err
	}
	live, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		live = nil
	} else if err != nil {
		return Object{}, fmt.Errorf("reading %s: %w", ref(obj), err)
	}
	merged, err := ri.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: d.opts.FieldManager, Force: true, DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		return Object{}, &RefusedError{Err: fmt.Errorf("the API server refuses %s: %w", ref(obj), err)}
	}
	o := identify(obj)
	o.Change, o.Merged = Update, clean(merged)
	from := ref(obj) + " (live)"
	if live == nil {
		o.Change, from = Create, "/dev/null"
	} else {
		fields := ownedFields(merged, d.opts.FieldManager)
		o.Live, o.Merged = keep(clean(live), fields), keep(o.Merged, fields)
	}
	maskSecret(o.Live, o.Merged)
	o.Live, o.Merged = m.apply(o.Live), m.apply(o.Merged)
	if o.Diff, err = diffOf(from, ref(obj)+" "+to, o.Live, o.Merged); err != nil {
		return Object{}, err
	}
	if o.Diff == "" {
		o.Change = Unchanged
	}
	return o, nil
}

// deleted returns the Delete of obj, an object the new revision drops, when
// it exists.
func (d *differ) deleted(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured, to string, m *masker) (Object, bool, error) {
	ri, err := d.resourceOf(dyn, obj)
	if err != nil {
		return Object{}, false, err
	}
	live, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return Object{}, false, nil
	}
	if err != nil {
		return Object{}, false, fmt.Errorf("reading %s: %w", ref(obj), err)
	}
	o := identify(obj)
	o.Change, o.Live = Delete, clean(live)
	maskSecret(o.Live, nil)
	o.Live = m.apply(o.Live)
	o.Diff, err = diffOf(ref(obj)+" (live)", "/dev/null", o.Live, nil)
	return o, true, err
}

// diffOf returns the unified diff of live and merged (either nil) as YAML.
func diffOf(from, to string, live, merged map[string]any) (string, error) {
	text := func(m map[string]any) (string, error) {
		if m == nil {
			return "", nil
		}
		b, err := yaml.Marshal(m) // keys sorted: the same object always reads the same
		return string(b), err
	}
	a, err := text(live)
	if err != nil {
		return "", err
	}
	b, err := text(merged)
	if err != nil {
		return "", err
	}
	return unified(from, to, a, b), nil
}

func identify(obj *unstructured.Unstructured) Object {
	return Object{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// ref names obj in a diff's header: apiVersion, kind, namespace/name.
func ref(obj *unstructured.Unstructured) string {
	name := obj.GetName()
	if ns := obj.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return obj.GetAPIVersion() + " " + obj.GetKind() + " " + name
}

// key identifies an object of a release as Helm does: group, kind, namespace, name.
func key(obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	return gvk.Group + "/" + gvk.Kind + "/" + obj.GetNamespace() + "/" + obj.GetName()
}

// sortObjects sorts objs by group, kind, namespace and name.
func sortObjects(objs []Object) {
	sort.SliceStable(objs, func(i, j int) bool {
		a, b := objs[i], objs[j]
		ga, gb := schema.FromAPIVersionAndKind(a.APIVersion, a.Kind).Group, schema.FromAPIVersionAndKind(b.APIVersion, b.Kind).Group
		if ga != gb {
			return ga < gb
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
}
