package depends

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Annotation lists the resources a custom resource depends on.
const Annotation = "rudder.dev/depends-on"

// maxVisited bounds the resources a cycle check reads.
const maxVisited = 1000

// Ref is one resource depended on.
type Ref struct {
	GVK schema.GroupVersionKind
	types.NamespacedName
}

// String names r as the annotation does: kind/namespace/name in lower case.
func (r Ref) String() string {
	return strings.ToLower(r.GVK.Kind) + "/" + r.Namespace + "/" + r.Name
}

// Key is the index key of r, unique across groups.
func (r Ref) Key() string {
	return r.GVK.GroupKind().String() + "/" + r.Namespace + "/" + r.Name
}

// Kinds are what a dependency may be: of a kind rudder serves, and in the
// resource's own namespace unless CrossNamespace allows others.
type Kinds struct {
	// GVKs are the kinds rudder serves. None: the annotation is not read.
	GVKs []schema.GroupVersionKind
	// CrossNamespace lets an entry name a resource of another namespace, as
	// the manager's --allow-cross-namespace-refs asks. Default false: such an
	// entry is refused (ReasonCrossNamespace) before anything is read, so
	// that a resource learns nothing of a namespace its author may not read.
	CrossNamespace bool
}

// Reason says why a resource may not be released yet.
type Reason string

// The reasons of an *Error, which are the Released condition's.
const (
	ReasonNotReady Reason = "DependencyNotReady" // a dependency is missing or not Ready
	ReasonCycle    Reason = "DependencyCycle"    // the dependencies lead back to the resource
	ReasonInvalid  Reason = "DependsOnInvalid"   // the annotation cannot be read
	// ReasonCrossNamespace: an entry names another namespace, and
	// Kinds.CrossNamespace does not allow it.
	ReasonCrossNamespace Reason = "CrossNamespaceRef"
)

// Error says why a resource's dependencies hold its release back.
type Error struct {
	Reason  Reason
	Message string
}

func (e *Error) Error() string { return e.Message }

// Parse reads obj's annotation into refs; nil when it has none. A malformed
// entry or an unknown kind is an *Error of ReasonInvalid naming it; an entry
// of another namespace, unless k.CrossNamespace, one of ReasonCrossNamespace.
func (k Kinds) Parse(obj client.Object) ([]Ref, error) {
	value, ok := obj.GetAnnotations()[Annotation]
	if !ok {
		return nil, nil
	}
	var refs []Ref
	for _, entry := range strings.Split(value, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		ref, err := k.parseEntry(entry, obj.GetNamespace())
		if err != nil {
			return nil, &Error{Reason: ReasonInvalid, Message: fmt.Sprintf("annotation %s: %q %v", Annotation, entry, err)}
		}
		if ref.Namespace != obj.GetNamespace() && !k.CrossNamespace {
			return nil, &Error{Reason: ReasonCrossNamespace, Message: fmt.Sprintf("annotation %s: %q names another namespace; "+
				"references stay in the resource's namespace unless the manager runs with --allow-cross-namespace-refs", Annotation, entry)}
		}
		if !slices.Contains(refs, ref) {
			refs = append(refs, ref)
		}
	}
	return refs, nil
}

func (k Kinds) parseEntry(entry, namespace string) (Ref, error) {
	parts := strings.Split(entry, "/")
	var kind string
	ref := Ref{NamespacedName: types.NamespacedName{Namespace: namespace}}
	switch len(parts) {
	case 2:
		kind, ref.Name = parts[0], parts[1]
	case 3:
		ref.Namespace, kind, ref.Name = parts[0], parts[1], parts[2]
	default:
		return ref, fmt.Errorf("is not kind/name or namespace/kind/name; write e.g. database/orders")
	}
	if ref.Name == "" || ref.Namespace == "" {
		return ref, fmt.Errorf("has an empty name or namespace; write e.g. database/orders")
	}
	gvk, err := k.kind(kind)
	ref.GVK = gvk
	return ref, err
}

// kind resolves a kind as written: its name in any case, or kind.group.
func (k Kinds) kind(s string) (schema.GroupVersionKind, error) {
	var found []schema.GroupVersionKind
	for _, gvk := range k.GVKs {
		if strings.EqualFold(s, gvk.Kind) || strings.EqualFold(s, gvk.Kind+"."+gvk.Group) {
			found = append(found, gvk)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		names := make([]string, len(k.GVKs))
		for i, gvk := range k.GVKs {
			names[i] = strings.ToLower(gvk.Kind)
		}
		return schema.GroupVersionKind{}, fmt.Errorf("names kind %q, which rudder does not serve; use one of %s", s, strings.Join(names, ", "))
	default:
		return schema.GroupVersionKind{}, fmt.Errorf("names kind %q of more than one group; write kind.group, e.g. %s", s,
			strings.ToLower(found[0].Kind+"."+found[0].Group))
	}
}

// Check reports whether obj's dependencies are all Ready: nil when they are
// (or it has none), else an *Error saying what it waits for (one it cannot
// read included), that they form a cycle, or that the annotation is malformed.
func (k Kinds) Check(ctx context.Context, reader client.Reader, obj client.Object, gvk schema.GroupVersionKind) error {
	refs, err := k.Parse(obj)
	if err != nil || len(refs) == 0 {
		return err
	}
	self := Ref{GVK: gvk, NamespacedName: client.ObjectKeyFromObject(obj)}
	if cycle := k.cycle(ctx, reader, self, refs); cycle != nil {
		return &Error{Reason: ReasonCycle, Message: fmt.Sprintf("annotation %s makes a cycle: %s; remove one of these dependencies",
			Annotation, strings.Join(cycle, " → "))}
	}
	var waiting []string
	for _, ref := range refs {
		dep, err := get(ctx, reader, ref)
		why := notReady(dep)
		if err != nil {
			why = fmt.Sprintf("to be readable (%v)", err)
		}
		if why != "" {
			waiting = append(waiting, fmt.Sprintf("%s %s %s", ref.GVK.Kind, name(ref, self.Namespace), why))
		}
	}
	if len(waiting) > 0 {
		return &Error{Reason: ReasonNotReady, Message: "Waiting for " + strings.Join(waiting, "; ")}
	}
	return nil
}

// cycle returns the path back to self through the dependencies, if any: a
// depth-first walk of the annotations of the resources depended on. What
// cannot be read, or carries a malformed annotation, ends its branch.
func (k Kinds) cycle(ctx context.Context, reader client.Reader, self Ref, refs []Ref) []string {
	visited := map[Ref]bool{}
	var walk func(path []Ref, refs []Ref) []Ref
	walk = func(path []Ref, refs []Ref) []Ref {
		for _, ref := range refs {
			if ref == self {
				return append(path, ref)
			}
			if visited[ref] || len(visited) >= maxVisited {
				continue
			}
			visited[ref] = true
			dep, err := get(ctx, reader, ref)
			if err != nil || dep == nil {
				continue
			}
			next, err := k.Parse(dep)
			if err != nil {
				continue
			}
			if found := walk(append(path[:len(path):len(path)], ref), next); found != nil {
				return found
			}
		}
		return nil
	}
	found := walk([]Ref{self}, refs)
	if found == nil {
		return nil
	}
	out := make([]string, len(found))
	for i, r := range found {
		out[i] = strings.ToLower(r.GVK.Kind) + "/" + name(r, self.Namespace)
	}
	return out
}

// get reads ref; nil when it does not exist.
func get(ctx context.Context, reader client.Reader, ref Ref) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ref.GVK)
	err := reader.Get(ctx, ref.NamespacedName, u)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading dependency %s: %w", ref, err)
	}
	return u, nil
}

// notReady says why dep is not Ready for its current generation; "" when it is.
func notReady(dep *unstructured.Unstructured) string {
	if dep == nil {
		return "to exist"
	}
	if !dep.GetDeletionTimestamp().IsZero() {
		return "to be Ready, but it is being deleted"
	}
	observed, _, _ := unstructured.NestedInt64(dep.Object, "status", "observedGeneration")
	if observed != dep.GetGeneration() {
		return fmt.Sprintf("to be Ready at generation %d (rudder has acted on %d)", dep.GetGeneration(), observed)
	}
	ready := Ready(dep)
	switch {
	case ready == nil:
		return "to be Ready (no Ready condition yet)"
	case ready["status"] == "True":
		return ""
	default:
		return fmt.Sprintf("to be Ready (Ready %v, %v: %v)", ready["status"], ready["reason"], ready["message"])
	}
}

// Ready returns obj's Ready condition as stored (type, status, reason,
// message, ...), nil when it has none: the object's own map, not a copy,
// cheap enough for an event filter. Callers must not change it.
func Ready(obj *unstructured.Unstructured) map[string]any {
	conds, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "conditions")
	list, _ := conds.([]any)
	for _, c := range list {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
			return m
		}
	}
	return nil
}

// name is ref's name, with its namespace when that is not ns.
func name(ref Ref, ns string) string {
	if ref.Namespace == ns {
		return ref.Name
	}
	return ref.Namespace + "/" + ref.Name
}

// IsError reports whether err is an *Error, and returns it.
func IsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Keys returns the index keys of obj's dependencies: Ref.Key of each, none
// when the annotation is malformed.
func (k Kinds) Keys(obj client.Object) []string {
	refs, err := k.Parse(obj)
	if err != nil {
		return nil
	}
	keys := make([]string, len(refs))
	for i, r := range refs {
		keys[i] = r.Key()
	}
	return keys
}
