package preview

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Change is what applying a resource would do to one object of its release.
type Change string

// The changes of an object.
const (
	Create    Change = "create"
	Update    Change = "update"
	Delete    Change = "delete"
	Unchanged Change = "unchanged"
)

// Action is what the reconciler would do to a release.
type Action string

// The actions on a release.
const (
	// Install: no revision is stored, or the newest is uninstalled.
	Install Action = "install"
	// Upgrade: the values or the chart differ from the deployed revision's.
	Upgrade Action = "upgrade"
	// None: the deployed revision has these values and this chart.
	None Action = "none"
)

// Report is what applying a list of resources would do.
type Report struct {
	// Resources are in the order they were given.
	Resources []Resource `json:"resources"`
}

// Resource is what applying one custom resource would do to its release.
type Resource struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	// Release is the Helm release's name, in Namespace.
	Release string `json:"release"`
	// Action is what the reconciler would do to the release.
	Action Action `json:"action"`
	// Deployed is the revision deployed now; 0 when none is.
	Deployed int `json:"deployedRevision"`
	// Revision is the revision the action would store; 0 for None.
	Revision int `json:"revision,omitempty"`
	// ActingAs is the identity every read and dry run for the resource used:
	// the account the reconciler acts as, or "" for the caller's own.
	ActingAs string `json:"actingAs,omitempty"`
	// Notes say what the preview could not tell, such as a hook that failed.
	Notes []string `json:"notes,omitempty"`
	// Objects are the release's objects, sorted by group, kind, namespace
	// and name.
	Objects []Object `json:"objects"`
}

// Object is one object of a release, before and after.
type Object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	Change     Change `json:"change"`
	// Live is the object as it is, less status, metadata noise and (for an
	// update) the fields other managers own; Secret data masked. Nil for a
	// Create.
	Live map[string]any `json:"live,omitempty"`
	// Merged is the object as the API server's dry run makes it, cut as
	// Live is. Nil for a Delete.
	Merged map[string]any `json:"merged,omitempty"`
	// Diff is the unified diff of Live and Merged as YAML; "" when Unchanged.
	Diff string `json:"diff,omitempty"`
}

// Differs reports whether applying the resources would change anything: an
// object created, changed or deleted, or a release given a new revision.
func (r *Report) Differs() bool {
	for _, res := range r.Resources {
		if res.Differs() {
			return true
		}
	}
	return false
}

// Differs reports whether applying the resource would change its release.
func (r Resource) Differs() bool {
	if r.Action != None {
		return true
	}
	for _, o := range r.Objects {
		if o.Change != Unchanged {
			return true
		}
	}
	return false
}

// WriteText writes, for each resource that would change its release, a
// line naming the release and revision, then the unified diff of each
// object that would change. A resource that changes nothing writes nothing
// but its notes.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, res := range r.Resources {
		ref := strings.ToLower(res.Kind) + "/" + res.Name
		for _, n := range res.Notes {
			fmt.Fprintf(&b, "# %s in namespace %s: note: %s\n", ref, res.Namespace, n)
		}
		if !res.Differs() {
			continue
		}
		as := "as you"
		if res.ActingAs != "" {
			as = "as " + res.ActingAs
		}
		switch res.Action {
		case Install:
			fmt.Fprintf(&b, "# %s in namespace %s: release %s would be installed as revision %d (%s)\n", ref, res.Namespace, res.Release, res.Revision, as)
		case Upgrade:
			fmt.Fprintf(&b, "# %s in namespace %s: release %s would be upgraded from revision %d to %d (%s)\n", ref, res.Namespace, res.Release, res.Deployed, res.Revision, as)
		default:
			fmt.Fprintf(&b, "# %s in namespace %s: release %s stays at revision %d, yet its objects differ from it (%s)\n", ref, res.Namespace, res.Release, res.Deployed, as)
		}
		for _, o := range res.Objects {
			if o.Change != Unchanged {
				b.WriteString(o.Diff)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}
