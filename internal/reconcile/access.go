package reconcile

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/owner"
)

// access is how o's release acts on the cluster: within the resource's
// namespace (and the kind's cluster-scoped kinds), as the account rudder acts
// as for the resource.
func (r *Reconciler) access(o *observation) helm.Access {
	gk := r.Watch.GVK.GroupKind()
	return helm.Access{
		Scope:    r.scope(o),
		User:     o.actor.User(),
		Resource: o.Resource.GetUID(),
		Owns:     func(m metav1.Object) bool { return owner.Owns(m, o.Resource, gk) },
		HandOver: owner.Annotation + "=" + owner.AnnotationValue(o.Resource, gk),
	}
}

// scope is where o's release's objects may be: the resource's namespace, and
// the kind's cluster-scoped kinds.
func (r *Reconciler) scope(o *observation) helm.Scope {
	return helm.Scope{Namespace: o.Release.Namespace, ClusterScoped: r.Watch.ClusterScoped}
}

// helmFor returns a Helm client for o's release, acting as access says.
func (r *Reconciler) helmFor(o *observation) (*helm.Client, error) {
	return r.Helm.For(r.access(o))
}

// actingClient returns the client that writes on o's resource's behalf: one
// impersonating its account, or rudder's own.
func (r *Reconciler) actingClient(o *observation) (client.Client, error) {
	c, err := r.Impersonator.Client(o.actor)
	if c == nil || err != nil {
		return r.Client, err
	}
	return c, nil
}

// actingReader returns the reader of what o's resource asks rudder to read
// for it (values sources, dependencies): as its account, from the API
// server, or rudder's own fallback.
func (r *Reconciler) actingReader(o *observation, fallback client.Reader) (client.Reader, error) {
	c, err := r.Impersonator.Client(o.actor)
	if c == nil || err != nil {
		return fallback, err
	}
	return c, nil
}
