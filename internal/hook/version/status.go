package version

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/rudder-operator/rudder/internal/hook"
)

var _ hook.StatusSchemer = (*Hook)(nil)

// StatusSchema implements hook.StatusSchemer: the keys Reconcile writes.
func (*Hook) StatusSchema() map[string]apiextensionsv1.JSONSchemaProps {
	return map[string]apiextensionsv1.JSONSchemaProps{
		"currentReplicas": {
			Description: "Number of the Database's PostgreSQL pods (labeled app=<name>), ready or not, as rudder's " +
				"version hook counted them.",
			Type:   "integer",
			Format: "int32",
		},
		"currentVersion": {
			Description: "Version the ready PostgreSQL pods run (the tag of their postgres container's image, " +
				`e.g. "16.4"), as rudder's version hook observed it; several versions with their pod counts ` +
				`("16.4 (1), 16 (1)") while an update rolls out, unset while no pod is ready.`,
			Type: "string",
		},
	}
}
