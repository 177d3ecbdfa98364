package owner

import (
	"bytes"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/rudder-operator/rudder/internal/helm"
)

// PostRenderer refuses a render with an object outside Scope, and marks every
// rendered object as owned by Owner and labels it
// with LabelRelease. Namespaced
// objects in Owner's namespace get a controller owner reference, so the
// garbage collector removes them with their custom resource and watches find
// their owner; every other object gets the Annotation instead, and so does an
// object the chart keeps (helm.sh/resource-policy: keep), which the garbage
// collector must not take away after Helm's uninstall left it.
type PostRenderer struct {
	Owner *unstructured.Unstructured
	// Release is the name of the release being rendered.
	Release string
	Mapper  meta.RESTMapper
	// Scope bounds the rendered objects: one outside it fails the render,
	// before anything is applied.
	Scope helm.Scope
}

// Run implements Helm's postrender.PostRenderer.
func (p PostRenderer) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	objs, err := helm.ParseManifest(in.String())
	if err != nil {
		return nil, err
	}
	var outside []error
	for _, obj := range objs {
		if err := p.Scope.Check(obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName(), p.namespaced(obj)); err != nil {
			outside = append(outside, err)
		}
	}
	if err := errors.Join(outside...); err != nil {
		return nil, err
	}
	out := &bytes.Buffer{}
	for _, obj := range objs {
		p.mark(obj)
		b, err := yaml.Marshal(obj.Object)
		if err != nil {
			return nil, fmt.Errorf("encoding %s %q: %w", obj.GetKind(), obj.GetName(), err)
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	return out, nil
}

func (p PostRenderer) mark(obj *unstructured.Unstructured) {
	Stamp(obj, p.Release)
	ns := obj.GetNamespace()
	keep := helm.Kept(obj.GetAnnotations())
	if !keep && p.namespaced(obj) && (ns == "" || ns == p.Owner.GetNamespace()) {
		obj.SetOwnerReferences(withOwner(obj.GetOwnerReferences(), p.reference()))
		return
	}
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[Annotation] = AnnotationValue(p.Owner, p.Owner.GroupVersionKind().GroupKind())
	obj.SetAnnotations(ann)
}

// namespaced reports whether obj's kind is namespaced. A kind the cluster does
// not know yet is treated as cluster-scoped: the annotation works for both.
func (p PostRenderer) namespaced(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	m, err := p.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil && m.Scope.Name() == meta.RESTScopeNameNamespace
}

func (p PostRenderer) reference() metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{
		APIVersion:         p.Owner.GetAPIVersion(),
		Kind:               p.Owner.GetKind(),
		Name:               p.Owner.GetName(),
		UID:                p.Owner.GetUID(),
		Controller:         &yes,
		BlockOwnerDeletion: &yes,
	}
}

// withOwner adds ref to refs, replacing a reference to the same owner. An
// object the chart already gave a controller keeps it: ours is then a plain
// owner reference.
func withOwner(refs []metav1.OwnerReference, ref metav1.OwnerReference) []metav1.OwnerReference {
	out := refs[:0:0]
	for _, r := range refs {
		if r.UID == ref.UID {
			continue
		}
		if r.Controller != nil && *r.Controller {
			no := false
			ref.Controller = &no
		}
		out = append(out, r)
	}
	return append(out, ref)
}

// AnnotationValue is the value of Annotation on an object made for o, the
// custom resource: "<Kind>.<group>/<namespace>/<name>/<uid>".
func AnnotationValue(o metav1.Object, gk schema.GroupKind) string {
	return legacyValue(o, gk) + "/" + string(o.GetUID())
}

// legacyValue is the value of Annotation that rudder wrote before it named
// the resource's UID: "<Kind>.<group>/<namespace>/<name>".
func legacyValue(o metav1.Object, gk schema.GroupKind) string {
	return fmt.Sprintf("%s.%s/%s/%s", gk.Kind, gk.Group, o.GetNamespace(), o.GetName())
}
