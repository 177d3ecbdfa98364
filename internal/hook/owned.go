package hook

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// A hook acts only on objects that are its resource's: a tenant may have
// rudder's kinds and nothing more in a namespace, and a resource named after
// an object already there must not let rudder change or delete it.
//
// An object a hook makes for one resource's life (a CronJob, a Job) carries
// the resource's controller reference (OwnerReference, Controls). An object
// that outlives the resource (a volume claim, a generated Secret), for a
// resource of the same name to find again, cannot: the garbage collector
// deletes an object whose owners are gone. It carries AnnotationGeneratedFor
// instead (GeneratedFor): a record only who may write the object can forge.
// Both name the resource's UID, not only its name: an object made for an
// earlier resource of the same name is not the later one's, to change, adopt
// or delete, until someone who may write the object hands it over.
const (
	// AnnotationGeneratedFor marks an object that outlives its resource with
	// the resource it was made for, "<Kind>/<name>/<uid>" in the same
	// namespace. rudder wrote "<Kind>/<name>" before it named the UID.
	AnnotationGeneratedFor = "rudder.dev/generated-for"
	// ReasonObjectNotOwned is the reason of a hook's condition when an object
	// it would act on is there under its name but is not the resource's.
	ReasonObjectNotOwned = "ObjectNotOwned"
)

// OwnerReference is the controller reference to obj that a hook puts on an
// object made for obj's life.
func OwnerReference(obj *unstructured.Unstructured) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Name: obj.GetName(),
		UID: obj.GetUID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
}

// Controls reports whether o's controller reference is to obj, by UID.
func Controls(obj *unstructured.Unstructured, o metav1.Object) bool {
	ref := metav1.GetControllerOfNoCopy(o)
	return ref != nil && obj.GetUID() != "" && ref.UID == obj.GetUID()
}

// GeneratedFor is the value of AnnotationGeneratedFor on an object made for obj.
func GeneratedFor(obj *unstructured.Unstructured) string {
	return obj.GetKind() + "/" + obj.GetName() + "/" + string(obj.GetUID())
}

// IsGeneratedFor reports whether o carries AnnotationGeneratedFor naming obj
// by UID. An annotation rudder wrote before it named the UID counts when it
// names obj and o was created no earlier than obj: an earlier resource of
// the name made its objects before obj existed.
func IsGeneratedFor(obj *unstructured.Unstructured, o metav1.Object) bool {
	switch o.GetAnnotations()[AnnotationGeneratedFor] {
	case GeneratedFor(obj):
		return obj.GetUID() != ""
	case obj.GetKind() + "/" + obj.GetName():
		return !o.GetCreationTimestamp().Time.Before(obj.GetCreationTimestamp().Time)
	}
	return false
}

// GeneratedForName returns the "<Kind>/<name>" that o's AnnotationGeneratedFor
// names, whichever life of that name it was made for; "" when it has none.
func GeneratedForName(o metav1.Object) string {
	v := o.GetAnnotations()[AnnotationGeneratedFor]
	kind, rest, ok := strings.Cut(v, "/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return kind + "/" + name
}

// MadeByRelease reports whether o, an object without AnnotationGeneratedFor
// under a name obj's release makes without an owner reference (the claim of
// its StatefulSet), was made for obj: created no earlier than obj. An object
// that was there before obj is someone else's. The hook records the first as
// obj's with AnnotationGeneratedFor before it acts on it.
func MadeByRelease(obj *unstructured.Unstructured, o metav1.Object) bool {
	if _, marked := o.GetAnnotations()[AnnotationGeneratedFor]; marked {
		return false
	}
	return !o.GetCreationTimestamp().Time.Before(obj.GetCreationTimestamp().Time)
}

// NotOwned is the condition of a hook that leaves kind name alone: the object
// is there under the name the hook needs but is not obj's; does says what the
// hook does not do for that. It says how to make room, and, for an object
// that outlives obj (kept), how its owner may hand it to obj; it never says
// what the object holds.
func NotOwned(obj *unstructured.Unstructured, kind, name, does string, kept bool) metav1.Condition {
	msg := fmt.Sprintf("%s %s exists but was not made by rudder for %s %s (uid %s), so rudder leaves it alone and %s. "+
		"Delete or rename that %s, or give this %s another name",
		kind, name, obj.GetKind(), obj.GetName(), obj.GetUID(), does, kind, obj.GetKind())
	if kept {
		msg += fmt.Sprintf("; if it is meant for this %s (kept from an earlier %s of this name, say), whoever may edit it can hand it over: "+
			"kubectl annotate %s %s %s=%s --overwrite", obj.GetKind(), obj.GetKind(), strings.ToLower(kind), name, AnnotationGeneratedFor, GeneratedFor(obj))
	}
	return metav1.Condition{Status: metav1.ConditionFalse, Reason: ReasonObjectNotOwned, Message: msg}
}
