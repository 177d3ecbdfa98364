package backup

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/rudder-operator/rudder/internal/hook"
)

var _ hook.StatusSchemer = (*Hook)(nil)

// StatusSchema implements hook.StatusSchemer: the keys Reconcile writes.
func (*Hook) StatusSchema() map[string]apiextensionsv1.JSONSchemaProps {
	return map[string]apiextensionsv1.JSONSchemaProps{
		"lastBackup": {
			Description: "When the most recent successful backup completed.",
			Type:        "string",
			Format:      "date-time",
		},
	}
}
