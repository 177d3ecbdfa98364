package hook

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Hook is one named piece of reconcile for the kinds that enable it.
type Hook interface {
	// Name is how watches.yaml enables the hook.
	Name() string
	// Condition is the one condition type the hook owns on each resource.
	Condition() string
	// Reconcile runs on every reconcile of a resource that is not being
	// deleted, before rudder decides whether to install or upgrade. values are
	// the release values so far; the hook must not change them but may return
	// its own. An error blocks the Helm step, shows in the hook's condition and
	// is retried with backoff.
	Reconcile(ctx context.Context, obj *unstructured.Unstructured, values map[string]any) (Result, error)
	// Finalize runs once the release of a deleted resource is uninstalled,
	// before the resource goes. An error keeps the resource and is retried.
	Finalize(ctx context.Context, obj *unstructured.Unstructured) error
}

// Result is what a hook contributes to one reconcile.
type Result struct {
	// Values are merged over the release values (maps merge, other values
	// replace). They are stored in Helm's release: never put a secret here.
	Values map[string]any
	// Status holds the top-level .status fields the hook owns, such as
	// "lastBackup". Keys rudder itself writes are refused.
	Status map[string]any
	// Condition is the state of the hook's condition; its Type is filled in.
	Condition metav1.Condition
	// BlocksReady keeps the resource from being Ready while Condition is not
	// True (a restore in progress). Other hooks' conditions only inform (the
	// last backup failed, yet the database serves).
	BlocksReady bool
	// BlocksRelease holds back every Helm step (install, upgrade, rollback)
	// while Condition is not True: the hook found what the release must not
	// start on, such as another resource's data. The hooks after it do not
	// run. Unlike an error, it is no failure: nothing is retried with backoff
	// (set RequeueAfter to look again), and Condition says what to do.
	BlocksRelease bool
	// RequeueAfter asks for another reconcile after this long; 0 for none.
	RequeueAfter time.Duration
}

// Registry holds the hooks a build of rudder has, by name.
type Registry struct {
	hooks map[string]Hook
}

// Add registers h; names must be unique.
func (r *Registry) Add(h Hook) error {
	if r.hooks == nil {
		r.hooks = map[string]Hook{}
	}
	if _, dup := r.hooks[h.Name()]; dup {
		return fmt.Errorf("hook %q registered twice", h.Name())
	}
	r.hooks[h.Name()] = h
	return nil
}

// Resolve returns the hooks of names, in order, or an error naming the first
// unknown one and the hooks there are.
func (r *Registry) Resolve(names []string) ([]Hook, error) {
	out := make([]Hook, 0, len(names))
	for _, n := range names {
		h, ok := r.hooks[n]
		if !ok {
			return nil, fmt.Errorf("no hook named %q is built into rudder (known: %s)", n, r.known())
		}
		out = append(out, h)
	}
	return out, nil
}

func (r *Registry) known() string {
	if len(r.hooks) == 0 {
		return "none"
	}
	names := make([]string, 0, len(r.hooks))
	for n := range r.hooks {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
