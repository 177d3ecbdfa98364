package helm

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/kube"
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
// leave such objects alone. It is the one place every Helm action (install,
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
	// owns tells the objects of the custom resource; nil: every object.
	owns func(metav1.Object) bool
	// ownedOnly has deletes leave every object owns does not claim.
	ownedOnly bool
	// skipped, when set, is called with each object left alone.
	skipped func(ref string)
}

func (confined) IsReachable() error { return nil }

func (c confined) Create(rl kube.ResourceList) (*kube.Result, error) {
	if err := c.scope.checkAll(rl); err != nil {
		return nil, err
	}
	return c.Client.Create(rl)
}

func (c confined) Update(original, target kube.ResourceList, force bool) (*kube.Result, error) {
	if err := c.scope.checkAll(target); err != nil {
		return nil, err
	}
	return c.Client.Update(c.kept(original, target), target, force)
}

func (c confined) UpdateThreeWayMerge(original, target kube.ResourceList, force bool) (*kube.Result, error) {
	if err := c.scope.checkAll(target); err != nil {
		return nil, err
	}
	return c.Client.UpdateThreeWayMerge(c.kept(original, target), target, force)
}

// Delete and DeleteWithPropagationPolicy delete what deletable keeps of rl.
// When it keeps nothing, nothing is sent: Helm's client would fail an empty
// list ("no objects visited") and with it the uninstall.
func (c confined) Delete(rl kube.ResourceList) (*kube.Result, []error) {
	if rl = c.deletable(rl); len(rl) == 0 {
		return &kube.Result{}, nil
	}
	return c.Client.Delete(rl)
}

func (c confined) DeleteWithPropagationPolicy(rl kube.ResourceList, policy metav1.DeletionPropagation) (*kube.Result, []error) {
	if rl = c.deletable(rl); len(rl) == 0 {
		return &kube.Result{}, nil
	}
	return c.Client.DeleteWithPropagationPolicy(rl, policy)
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
	if err := info.Get(); err != nil {
		return true
	}
	m, err := meta.Accessor(info.Object)
	if err != nil || !c.owns(m) {
		c.skip(info)
		return false
	}
	return true
}

func (c confined) skip(info *resource.Info) {
	if c.skipped == nil {
		return
	}
	kind := ""
	if info.Mapping != nil {
		kind = info.Mapping.GroupVersionKind.Kind
	}
	c.skipped(strings.TrimPrefix(kind+"/"+info.Name, "/"))
}

// NamespaceTerminating reports whether err is the API server's refusal to
// create anything in a namespace being deleted. Helm joins some errors into
// strings, so the message counts as well as the status cause.
func NamespaceTerminating(err error) bool {
	return apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) ||
		strings.Contains(err.Error(), "because it is being terminated")
}
