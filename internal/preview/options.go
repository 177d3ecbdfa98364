package preview

import (
	"errors"

	"k8s.io/client-go/rest"

	"github.com/rudder-operator/rudder"
	"github.com/rudder-operator/rudder/internal/signature"
	"github.com/rudder-operator/rudder/internal/watches"
)

// DefaultFieldManager is the field manager of the dry-run applies: the
// fields it would own are those a diff shows.
const DefaultFieldManager = "rudder"

// Options say how Diff reaches the cluster and which kinds it knows.
type Options struct {
	// Config reaches the API server as the caller. Every read and dry run
	// is made with it, impersonating the account the reconciler acts as for
	// a resource that has one. Required.
	Config *rest.Config
	// Namespace holds the resources that name none. Default "default".
	Namespace string
	// Watches are the kinds rudder serves and their charts. Default: those
	// built into rudder.
	Watches []watches.Watch
	// DefaultServiceAccount is the account the reconciler acts as for a
	// resource without the rudder.dev/service-account annotation, as the
	// manager's --default-service-account. Default "": the caller's own
	// identity for such a resource.
	DefaultServiceAccount string
	// FieldManager owns the fields of the dry-run applies. Default
	// DefaultFieldManager.
	FieldManager string
	// Signatures tells the revisions rudder signed: a preview then rests on
	// the revisions the reconciler would (the manager's admission webhook).
	// Default nil: every revision counts as signed, as for a caller without
	// rudder's key.
	Signatures *signature.Key
}

// withDefaults returns o with its defaults filled in, or an error naming
// the field missing.
func (o Options) withDefaults() (Options, error) {
	if o.Config == nil {
		return o, errors.New("preview: Options.Config is required")
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.FieldManager == "" {
		o.FieldManager = DefaultFieldManager
	}
	if o.Watches == nil {
		ws, err := watches.Load(rudder.Files, rudder.WatchesFile)
		if err != nil {
			return o, err
		}
		o.Watches = ws
	}
	return o, nil
}
