package leader

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/rudder-operator/rudder/internal/hook"
)

var _ hook.StatusSchemer = (*Hook)(nil)

// StatusSchema implements hook.StatusSchemer: the keys Reconcile writes.
func (*Hook) StatusSchema() map[string]apiextensionsv1.JSONSchemaProps {
	return map[string]apiextensionsv1.JSONSchemaProps{
		"leader": {Type: "string", Description: "The pod that leads (labeled rudder.dev/leader=true and holder of the Lease named " +
			"after the resource); absent while no selected pod is Ready."},
		"leaderSince": {Type: "string", Format: "date-time", Description: "When the leader began to lead (the Lease's acquireTime)."},
		"leaderChanges": {Type: "integer", Format: "int32", Description: "How many times another pod took the lead " +
			"(the Lease's leaseTransitions)."},
		"leaderNode": {Type: "string", Description: "The node the leader runs on: its loss moves the lead."},
	}
}
