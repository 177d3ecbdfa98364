package identity

import (
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Annotation names the ServiceAccount of the resource's namespace that rudder
// acts as for that resource, over the manager's default.
const Annotation = "rudder.dev/service-account"

// Self is how status names rudder acting with its own rights.
const Self = "rudder"

// Actor is whom rudder acts as for one custom resource.
type Actor struct {
	// Namespace and ServiceAccount name the account impersonated; an empty
	// ServiceAccount is rudder itself.
	Namespace, ServiceAccount string
}

// User is the user name the API server knows the account by, "" for rudder
// itself.
func (a Actor) User() string {
	if a.ServiceAccount == "" {
		return ""
	}
	return "system:serviceaccount:" + a.Namespace + ":" + a.ServiceAccount
}

// String is the account's user name, or Self.
func (a Actor) String() string {
	if u := a.User(); u != "" {
		return u
	}
	return Self
}

// Impersonator hands out the Actor of each resource and a client acting as
// it. It is safe for concurrent use. A nil Impersonator acts as rudder for
// every resource, annotated or not: a program that wires none has no way to
// impersonate.
type Impersonator struct {
	// Config is rudder's own REST config, the base of every client.
	Config *rest.Config
	// Scheme and Mapper are the manager's, for the clients made.
	Scheme *runtime.Scheme
	Mapper meta.RESTMapper
	// Default is the ServiceAccount acted as for a resource without the
	// annotation (--default-service-account); empty: rudder itself.
	Default string

	mu      sync.Mutex
	clients map[string]client.Client // by user name
}

// ActorFor returns whom rudder acts as for obj: the account its annotation
// names, else the default, else rudder. A malformed annotation is an error
// naming it and the fix.
func (i *Impersonator) ActorFor(obj metav1.Object) (Actor, error) {
	if i == nil {
		return Actor{}, nil
	}
	name, ok := obj.GetAnnotations()[Annotation]
	if !ok {
		name = i.Default
	}
	name = strings.TrimSpace(name)
	if ok {
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return Actor{}, fmt.Errorf("annotation %s: %q is not a ServiceAccount name (%s); name a ServiceAccount of namespace %q, or remove the annotation",
				Annotation, name, strings.Join(errs, "; "), obj.GetNamespace())
		}
	}
	if name == "" {
		return Actor{}, nil
	}
	return Actor{Namespace: obj.GetNamespace(), ServiceAccount: name}, nil
}

// Client returns a client that acts as a, made once per account and kept;
// nil for rudder itself, whose own clients the caller has. Its reads go to
// the API server: nothing it reads is cached.
func (i *Impersonator) Client(a Actor) (client.Client, error) {
	user := a.User()
	if user == "" || i == nil {
		return nil, nil
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if c, ok := i.clients[user]; ok {
		return c, nil
	}
	c, err := client.New(i.RESTConfig(a), client.Options{Scheme: i.Scheme, Mapper: i.Mapper})
	if err != nil {
		return nil, fmt.Errorf("creating a client acting as %s: %w", user, err)
	}
	if i.clients == nil {
		i.clients = map[string]client.Client{}
	}
	i.clients[user] = c
	return c, nil
}

// RESTConfig returns rudder's REST config acting as a.
func (i *Impersonator) RESTConfig(a Actor) *rest.Config {
	cfg := rest.CopyConfig(i.Config)
	if user := a.User(); user != "" {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	}
	return cfg
}
