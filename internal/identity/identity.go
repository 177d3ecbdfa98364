package identity

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
// acts as for that resource, over the manager's default: one of those the
// platform allows there (NamespaceAnnotation).
const Annotation = "rudder.dev/service-account"

// NamespaceAnnotation is the annotation of a Namespace that lists the
// ServiceAccounts of that namespace its resources may name in Annotation,
// comma separated. A tenant
// cannot write it: which accounts rudder may act as is the platform's choice,
// not the resource author's. The manager's default account is always allowed.
const NamespaceAnnotation = "rudder.dev/service-accounts"

// The errors of an account a resource may not have rudder act as.
var (
	// ErrInvalid: Annotation does not hold a ServiceAccount name.
	ErrInvalid = errors.New("not a ServiceAccount name")
	// ErrNotAllowed: Annotation names an account its namespace does not list.
	ErrNotAllowed = errors.New("ServiceAccount not allowed")
)

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
	// Allowed returns the accounts the resources of namespace ns may name
	// besides Default: those its Namespace's NamespaceAnnotation lists
	// (Allowed reads it). Nil: none but Default.
	Allowed func(ctx context.Context, ns string) ([]string, error)

	mu      sync.Mutex
	clients map[string]client.Client // by user name
}

// ActorFor returns whom rudder acts as for obj: the account its annotation
// names, else the default, else rudder. An annotation that names no account
// (ErrInvalid), or one its namespace does not allow (ErrNotAllowed), is an
// error naming the fix; the caller must then act as no one: there is no
// falling back to rudder's own rights.
func (i *Impersonator) ActorFor(ctx context.Context, obj metav1.Object) (Actor, error) {
	if i == nil {
		return Actor{}, nil
	}
	name, ok := obj.GetAnnotations()[Annotation]
	if !ok {
		if i.Default == "" {
			return Actor{}, nil
		}
		return Actor{Namespace: obj.GetNamespace(), ServiceAccount: i.Default}, nil
	}
	name = strings.TrimSpace(name)
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return Actor{}, fmt.Errorf("annotation %s: %q is %w (%s); name a ServiceAccount of namespace %q that the Namespace's %s allows, or remove the annotation",
			Annotation, name, ErrInvalid, strings.Join(errs, "; "), obj.GetNamespace(), NamespaceAnnotation)
	}
	allowed, err := i.allowed(ctx, obj.GetNamespace())
	if err != nil {
		return Actor{}, err
	}
	if !slices.Contains(allowed, name) {
		return Actor{}, fmt.Errorf("annotation %s: %w: %q; namespace %q allows %s; the platform allows an account by listing it in the annotation %s of Namespace %s, or remove the annotation",
			Annotation, ErrNotAllowed, name, obj.GetNamespace(), describe(allowed), NamespaceAnnotation, obj.GetNamespace())
	}
	return Actor{Namespace: obj.GetNamespace(), ServiceAccount: name}, nil
}

// allowed returns the accounts resources of namespace ns may name.
func (i *Impersonator) allowed(ctx context.Context, ns string) ([]string, error) {
	var out []string
	if i.Default != "" {
		out = append(out, i.Default)
	}
	if i.Allowed == nil {
		return out, nil
	}
	listed, err := i.Allowed(ctx, ns)
	if err != nil {
		return nil, fmt.Errorf("reading the ServiceAccounts namespace %q allows: %w", ns, err)
	}
	return append(out, listed...), nil
}

// AllowedBy returns the accounts a Namespace's annotations allow
// (NamespaceAnnotation).
func AllowedBy(annotations map[string]string) []string {
	var out []string
	for _, n := range strings.Split(annotations[NamespaceAnnotation], ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

func describe(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
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
