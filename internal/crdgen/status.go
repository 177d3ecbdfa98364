package crdgen

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/rudder-operator/rudder/internal/hook"
)

// statusSchema returns the schema of .status for kind: what rudder's release reconciler writes (see
// internal/reconcile's Status), then the keys of the hooks and of the chart's annotation.
func statusSchema(chart, kind string, hooks []hook.Hook, fromChart map[string]apiextensionsv1.JSONSchemaProps) (apiextensionsv1.JSONSchemaProps, error) {
	s := apiextensionsv1.JSONSchemaProps{
		Description: fmt.Sprintf("Observed state of the %s, written by rudder.", kind),
		Type:        "object",
		Properties:  commonStatus(kind),
	}
	owner := map[string]string{}
	for k := range s.Properties {
		owner[k] = "rudder's release reconciler"
	}
	add := func(by string, props map[string]apiextensionsv1.JSONSchemaProps) error {
		for _, k := range slices.Sorted(maps.Keys(props)) {
			if prev, taken := owner[k]; taken {
				return fmt.Errorf("chart %s: .status.%s is declared by %s and by %s; each status key has one "+
					"writer, so rename it", chart, k, prev, by)
			}
			owner[k] = by
			s.Properties[k] = props[k]
		}
		return nil
	}
	var names []string
	for _, h := range hooks {
		if schemer, ok := h.(hook.StatusSchemer); ok {
			names = append(names, h.Name())
			if err := add(fmt.Sprintf("hook %q", h.Name()), schemer.StatusSchema()); err != nil {
				return s, err
			}
		}
	}
	if len(names) > 0 {
		s.Description = fmt.Sprintf("Observed state of the %s, written by rudder and its hooks (%s).", kind,
			strings.Join(names, ", "))
	}
	return s, add("the Chart.yaml annotation "+AnnotationStatusSchema, fromChart)
}

// commonStatus is the status every kind has: internal/reconcile's Status, ReleaseStatus and HistoryEntry. A key
// the chart publishes (internal/reconcile's AnnotationStatusKey) is the chart's to declare in its annotation.
func commonStatus(kind string) map[string]apiextensionsv1.JSONSchemaProps {
	str := func(desc string) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "string", Description: desc}
	}
	date := func(desc string) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "string", Format: "date-time", Description: desc}
	}
	integer := func(format, desc string) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "integer", Format: format, Description: desc}
	}
	return map[string]apiextensionsv1.JSONSchemaProps{
		"observedGeneration": integer("int64", fmt.Sprintf("The .metadata.generation of the %s that rudder last acted on: "+
			"deployed, tried to deploy, or found invalid. A wait, a hold or a pause leaves it as it was.", kind)),
		"failures": {
			Type: "object",
			Description: "The failed tries in a row to deploy the current values and chart, kept here so that a restarted " +
				"rudder goes on counting towards the kind's remediation.maxAttempts. Absent after a success.",
			Required: []string{"count", "valuesDigest", "chartDigest"},
			Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"count":        integer("", "Failed tries in a row."),
				"reason":       str("Reason of the last failure (InstallFailed, UpgradeFailed, RollbackFailed, RemediationFailed, TestFailed)."),
				"message":      str("Error of the last failure."),
				"last":         date("When the last try failed."),
				"valuesDigest": str("Digest of the values the tries were made with."),
				"chartDigest":  str("Digest of the chart the tries were made with."),
			},
		},
		"phase": {
			Type: "string",
			Description: fmt.Sprintf("Summary of the %s's state: Pending (not yet installed), Deploying (first install "+
				"in progress), Running (release deployed and all its objects ready), Updating (upgrade in progress or "+
				"not all objects ready), Failed (see message and conditions).", kind),
			Enum: enumOf("Pending", "Deploying", "Running", "Updating", "Failed"),
		},
		"message": str("Human-readable explanation of the phase."),
		"replicas": integer("int32", "Number of pods of the release's workloads (the sum of their .status.replicas); "+
			"0 when the chart renders none."),
		"readyReplicas": integer("int32", "Number of those pods that are ready."),
		"conditions":    conditions(kind),
		"published": {
			Type: "array",
			Description: "The status keys the chart publishes: objects it renders annotated rudder.dev/status-key " +
				"have their data copied into status under that key.",
			Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}},
		},
		"lastHandledReconcileAt": str("The value of the rudder.dev/reconcile-requested-at annotation that the last " +
			"reconcile saw: once it equals the annotation, a reconcile asked for that way has run."),
		"actingAs": str("Whom rudder acts as for this resource: system:serviceaccount:<namespace>:<name> when it impersonates " +
			"that ServiceAccount (the manager's --default-service-account, or the annotation rudder.dev/service-account), " +
			"or \"rudder\" when it acts with its own rights (docs/security.md)."),
		"lastHandledTestAt": str("The value of the rudder.dev/test-requested-at annotation whose chart tests last ran: " +
			"once it equals the annotation, the tests asked for that way have run (see the Tested condition)."),
		"history": {
			Type:        "array",
			Description: "The release's stored revisions, newest first, at most the kind's maxHistory, as `helm history` shows them.",
			Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
				Type:     "object",
				Required: []string{"revision", "status"},
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"revision":     integer("", "The revision number."),
					"updated":      date("When the revision was deployed or last changed."),
					"status":       str("Helm's status of the revision (deployed, superseded, failed, pending-upgrade, ...)."),
					"chart":        str("The chart's name."),
					"chartVersion": str("The chart's version."),
					"appVersion":   str("The chart's appVersion."),
					"valuesDigest": str("Digest of the values the revision was made with."),
					"description":  str(`Helm's description of the revision ("Install complete", "Upgrade complete", or the error).`),
					"test": {
						Type:        "object",
						Description: "The last run of the revision's chart tests (helm.sh/hook: test), when they ran.",
						Required:    []string{"result"},
						Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"result":    {Type: "string", Enum: enumOf("Passed", "Failed"), Description: "Passed when every test succeeded."},
							"completed": date("When the run ended."),
						},
					},
				},
			}},
		},
		"release": {
			Type:        "object",
			Description: fmt.Sprintf("The Helm release that realizes this %s, as last observed in Helm's storage.", kind),
			Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"name":         str(fmt.Sprintf(`Name of the Helm release, "%s-<name>".`, strings.ToLower(kind))),
				"revision":     integer("", "Revision of the Helm release; increases with every install, upgrade or rollback."),
				"chart":        str("Name of the chart the release was installed from."),
				"chartVersion": str("Version of that chart."),
				"appVersion":   str("appVersion of that chart."),
				"status":       str("Helm's status of the release (deployed, failed, pending-install, pending-upgrade, ...)."),
				"valuesDigest": str(fmt.Sprintf("Digest of the values (the %s's spec) the release was installed with.", kind)),
				"chartDigest":  str("Digest of the chart the release was installed from."),
				"updated":      date("When the release was last deployed."),
			},
		},
	}
}

// conditions is the schema of metav1.Condition, as Kubebuilder writes it, in a list keyed by type.
func conditions(kind string) apiextensionsv1.JSONSchemaProps {
	return apiextensionsv1.JSONSchemaProps{
		Type:         "array",
		Description:  fmt.Sprintf("Latest observations of the %s's state, one per condition type.", kind),
		XListType:    ptrTo("map"),
		XListMapKeys: []string{"type"},
		Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
			Type:        "object",
			Description: "Condition contains details for one aspect of the current state of this API Resource.",
			Required:    []string{"lastTransitionTime", "message", "reason", "status", "type"},
			Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"lastTransitionTime": {Type: "string", Format: "date-time",
					Description: "When the condition last changed from one status to another."},
				"message": {Type: "string", MaxLength: ptrTo[int64](32768),
					Description: "Human-readable details of the transition. May be empty."},
				"observedGeneration": {Type: "integer", Format: "int64", Minimum: ptrTo[float64](0),
					Description: fmt.Sprintf("The .metadata.generation the condition was set from; stale when lower "+
						"than the %s's current generation.", kind)},
				"reason": {Type: "string", MinLength: ptrTo[int64](1), MaxLength: ptrTo[int64](1024),
					Pattern:     `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`,
					Description: "Programmatic identifier (CamelCase) of the reason for the last transition."},
				"status": {Type: "string", Enum: enumOf("True", "False", "Unknown"),
					Description: "Status of the condition."},
				"type": {Type: "string", MaxLength: ptrTo[int64](316),
					Pattern: `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?` +
						`(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`,
					Description: "Type of the condition, in CamelCase (e.g. Ready, Released)."},
			},
		}},
	}
}

// enumOf returns string values as enum entries.
func enumOf(values ...string) []apiextensionsv1.JSON {
	out := make([]apiextensionsv1.JSON, len(values))
	for i, v := range values {
		out[i] = apiextensionsv1.JSON{Raw: []byte(fmt.Sprintf("%q", v))}
	}
	return out
}
