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
		"backups": {
			Description: "The dumps kept on the backup claim after the most recent successful backup, newest first, " +
				"at most spec.backup.retention of them; a restore names one in spec.restore.backup.",
			Type: "array",
			Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"name":      {Type: "string", Description: "Name of the dump file."},
					"completed": {Type: "string", Format: "date-time", Description: "When the dump was taken (from its name)."},
				},
			}},
		},
	}
}
