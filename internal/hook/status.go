package hook

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// StatusSchemer is implemented by a hook that writes top-level .status keys
// (Result.Status). rudder's CRD generator adds the schemas it returns to the
// status schema of every kind that enables the hook, so that the API server
// keeps those keys instead of pruning them.
type StatusSchemer interface {
	// StatusSchema returns the schema of each .status key the hook writes,
	// by key. It must not name a key rudder itself writes.
	StatusSchema() map[string]apiextensionsv1.JSONSchemaProps
}
