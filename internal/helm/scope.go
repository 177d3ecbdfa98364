package helm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"helm.sh/helm/v4/pkg/kube"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
)

// The errors of a release that would reach past its scope.
var (
	// ErrOutsideNamespace: a namespaced object of the release is in another
	// namespace than the release's.
	ErrOutsideNamespace = errors.New("object outside the release's namespace")
	// ErrClusterScopedNotAllowed: a cluster-scoped object of a kind the
	// release may not have (watches.yaml clusterScoped).
	ErrClusterScopedNotAllowed = errors.New("cluster-scoped object not allowed")
	// ErrNotOwned: an object the release would change is there, was not
	// made by rudder for the release's resource (Access.Owns), and no
	// revision signed for it listed it before.
	ErrNotOwned = errors.New("object not made by rudder for this resource")
)

// Scope is where the objects of one release may be: namespaced objects in
// Namespace only, cluster-scoped objects only of the ClusterScoped kinds. A
// custom resource acts through its release, so this is what it can reach.
type Scope struct {
	Namespace     string
	ClusterScoped []schema.GroupKind
}

// Check returns an error naming obj when it lies outside s; namespaced tells
// whether obj's kind is namespaced.
func (s Scope) Check(gvk schema.GroupVersionKind, namespace, name string, namespaced bool) error {
	ref := gvk.Kind + "/" + name
	if !namespaced {
		if slices.Contains(s.ClusterScoped, gvk.GroupKind()) {
			return nil
		}
		return fmt.Errorf("%w: %s (%s) is cluster-scoped; a chart may render one only when its kind's watches.yaml entry lists it under clusterScoped",
			ErrClusterScopedNotAllowed, ref, groupOf(gvk))
	}
	if namespace != "" && namespace != s.Namespace {
		return fmt.Errorf("%w: %s is in namespace %q, the release in %q; a release's objects stay in its resource's namespace",
			ErrOutsideNamespace, ref, namespace, s.Namespace)
	}
	return nil
}

func groupOf(gvk schema.GroupVersionKind) string {
	if gvk.Group == "" {
		return "core"
	}
	return gvk.Group
}

// checkInfo checks one object Helm built from a manifest.
func (s Scope) checkInfo(info *resource.Info) error {
	namespaced := info.Mapping == nil || info.Mapping.Scope.Name() == meta.RESTScopeNameNamespace
	gvk := schema.GroupVersionKind{}
	if info.Mapping != nil {
		gvk = info.Mapping.GroupVersionKind
	} else if info.Object != nil {
		gvk = info.Object.GetObjectKind().GroupVersionKind()
	}
	return s.Check(gvk, info.Namespace, info.Name, namespaced)
}

// checkAll returns the errors of every object of rl outside s, joined.
func (s Scope) checkAll(rl kube.ResourceList) error {
	var errs []error
	for _, info := range rl {
		if err := s.checkInfo(info); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// confined is Helm's kube client held to a release's Scope: every create and
// update of an object outside it fails before anything is sent, and deletes
// leave such objects alone. An update changes an object that is there only
// when the revision it updates from, signed for the resource, listed it, or
// the resource owns it (owns): neither Helm's adoption of an object carrying
// the release's name nor a rollback takes over another's object. It is the one place every Helm action (install,
// upgrade, rollback, uninstall, hooks, tests) goes through to change the
// cluster, so a manifest rudder did not render (a forged or foreign revision)
// cannot reach past the scope either. An object an upgrade or a rollback
// would delete (in the revision before, not in the new one) is deleted only
// when owns says the custom resource owns it; with ownedOnly, so is every
// object an uninstall deletes: a revision rudder did not write can list
// objects rudder never made. It also skips Helm's
// reachability check, a new clientset and a GET /version before every action:
// the manager's watches already show the API server is there.
type confined struct {
	*kube.Client
	scope Scope
	// signed tells the manifests of revisions signed for the resource; the
	// objects built from one are recorded in built. Nil: none.
	signed func(manifest string) bool
	built  *builtFromSigned
	// owns tells the objects of the custom resource; nil: every object.
	owns func(metav1.Object) bool
	// handOver is the annotation that hands an object to the resource.
	handOver string
	// ownedOnly has deletes leave every object owns does not claim.
	ownedOnly bool
	// skipped, when set, is called with each object left alone.
	skipped func(ref string)
	// applied records the answers to the applies; nil: none.
	applied *applied
}

func (confined) IsReachable() error { return nil }

func (c confined) Create(rl kube.ResourceList, opts ...kube.ClientCreateOption) (*kube.Result, error) {
	if err := c.scope.checkAll(rl); err != nil {
		return nil, err
	}
	res, err := c.Client.Create(rl, opts...)
	c.applied.add(rl)
	return res, err
}

// Build builds the objects of manifest as Helm's client does, and records
// them as built from a signed revision when manifest is one.
func (c confined) Build(manifest io.Reader, validate bool) (kube.ResourceList, error) {
	b, err := io.ReadAll(manifest)
	if err != nil {
		return nil, err
	}
	rl, err := c.Client.Build(bytes.NewReader(b), validate)
	if err == nil && c.signed != nil && c.signed(string(b)) {
		c.built.add(rl)
	}
	return rl, err
}

func (c confined) Update(original, target kube.ResourceList, opts ...kube.ClientUpdateOption) (*kube.Result, error) {
	if err := c.check(original, target); err != nil {
		return &kube.Result{}, err // Helm reads the result of a failed update
	}
	res, err := c.Client.Update(c.kept(original, target), target, opts...)
	c.applied.add(target)
	return res, err
}

// check returns the errors of an update from original to target that would
// reach past the scope or change an object the resource does not own: one
// that is there and that neither the signed revision before listed (original,
// as built from that revision's manifest) nor the resource owns. Helm
// appends the objects it adopts (they carry the release's name) to original:
// they too must be owned.
func (c confined) check(original, target kube.ResourceList) error {
	if err := c.scope.checkAll(target); err != nil {
		return err
	}
	if c.owns == nil {
		return nil
	}
	var errs []error
	for _, info := range target {
		if o := original.Get(info); o != nil && c.built.has(o) {
			continue
		}
		live, err := resource.NewHelper(info.Client, info.Mapping).Get(info.Namespace, info.Name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", ref(info), err)
		}
		if m, err := meta.Accessor(live); err == nil && c.owns(m) {
			continue
		}
		msg := fmt.Sprintf("%s is there and was not made by rudder for this resource (an earlier one of its name, say, or not by rudder at all); "+
			"rudder neither changes nor deletes it. Delete or rename it", ref(info))
		if c.handOver != "" && info.Mapping != nil {
			msg += fmt.Sprintf("; if it is meant for this resource, whoever may edit it can hand it over: kubectl annotate %s %s %s --overwrite",
				strings.ToLower(info.Mapping.GroupVersionKind.Kind), info.Name, c.handOver)
		}
		errs = append(errs, fmt.Errorf("%w: %s", ErrNotOwned, msg))
	}
	return errors.Join(errs...)
}

// Delete deletes what deletable keeps of rl. When it keeps nothing, nothing
// is sent: Helm's client would fail an empty list ("no objects visited") and
// with it the uninstall.
func (c confined) Delete(rl kube.ResourceList, policy metav1.DeletionPropagation) (*kube.Result, []error) {
	if rl = c.deletable(rl); len(rl) == 0 {
		return &kube.Result{}, nil
	}
	return c.Client.Delete(rl, policy)
}

// deletable returns the objects of rl that may be deleted: those inside the
// scope and, with ownedOnly, owned by the resource.
func (c confined) deletable(rl kube.ResourceList) kube.ResourceList {
	return rl.Filter(func(info *resource.Info) bool {
		if c.scope.checkInfo(info) != nil {
			c.skip(info)
			return false
		}
		return !c.ownedOnly || c.owned(info)
	})
}

// kept returns what of original an update may know of: what lies inside the
// scope, less the objects it would delete (not in target) that the resource
// does not own. Helm's update deletes what original lists and target does not.
func (c confined) kept(original, target kube.ResourceList) kube.ResourceList {
	return original.Filter(func(info *resource.Info) bool {
		if c.scope.checkInfo(info) != nil {
			c.skip(info)
			return false
		}
		return target.Contains(info) || c.owned(info)
	})
}

// owned reads info's live object and reports whether the resource owns it;
// an object gone or unreadable counts as owned: Helm's delete reports it.
func (c confined) owned(info *resource.Info) bool {
	if c.owns == nil {
		return true
	}
	live, err := resource.NewHelper(info.Client, info.Mapping).Get(info.Namespace, info.Name)
	if err != nil {
		return true
	}
	m, err := meta.Accessor(live)
	if err != nil || !c.owns(m) {
		c.skip(info)
		return false
	}
	return true
}

func (c confined) skip(info *resource.Info) {
	if c.skipped != nil {
		c.skipped(ref(info))
	}
}

// ref names info's object as "<Kind>/<name>".
func ref(info *resource.Info) string {
	kind := ""
	if info.Mapping != nil {
		kind = info.Mapping.GroupVersionKind.Kind
	}
	return strings.TrimPrefix(kind+"/"+info.Name, "/")
}

// builtFromSigned records the objects Helm built from the manifest of a
// revision signed for the resource. Helm builds from one goroutine at a time
// within an action, but the record outlives it: hence the lock.
type builtFromSigned struct {
	mu    sync.Mutex
	infos map[*resource.Info]bool
}

func (b *builtFromSigned) add(rl kube.ResourceList) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.infos == nil {
		b.infos = map[*resource.Info]bool{}
	}
	for _, info := range rl {
		b.infos[info] = true
	}
}

func (b *builtFromSigned) has(info *resource.Info) bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.infos[info]
}

// NamespaceTerminating reports whether err is the API server's refusal to
// create anything in a namespace being deleted. Helm joins some errors into
// strings, so the message counts as well as the status cause.
func NamespaceTerminating(err error) bool {
	return apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) ||
		strings.Contains(err.Error(), "because it is being terminated")
}
