package chaos

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/rudder-operator/rudder/internal/hook"
)

var _ hook.StatusSchemer = (*Hook)(nil)

// StatusSchema implements hook.StatusSchemer: status.chaos, as State encodes it.
func (*Hook) StatusSchema() map[string]apiextensionsv1.JSONSchemaProps {
	str := func(d string) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "string", Description: d}
	}
	integer := func(d string) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "integer", Description: d}
	}
	at := func(d string) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "string", Format: "date-time", Description: d}
	}
	names := func(d string) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "array", Description: d,
			Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}}
	}
	round := apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"round":  integer("Number of the round in its schedule, from 1."),
			"at":     at("When the round was planned."),
			"action": str("What the round did to its pods: kill or evict."),
			"planned": {Type: "array", Description: "Pods a round written ahead acts on, by UID.",
				Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"name": str("Name of the pod."),
						"uid":  str("UID the pod must still have."),
					},
				}}},
			"pods":        names("Pods the round killed or evicted."),
			"refused":     names("Why the API server refused the action on a pod (a PodDisruptionBudget), per pod."),
			"skipped":     str("Why the round acted on no pod (the budget was spent, no pod was Ready)."),
			"readyBefore": integer("Selected pods Ready when the round was planned."),
			"recovery":    str("Time until every selected pod was Ready again, at least readyBefore of them, as a Go duration."),
			"recoveredAt": at("When every selected pod was seen Ready again."),
			"late":        {Type: "boolean", Description: "The pods were not all Ready again within the interval."},
			"unrecovered": {Type: "boolean", Description: "rudder stopped waiting before the pods were all Ready again."},
		},
	}
	pending := round
	pending.Description = "A round planned and written ahead, not yet recorded as done: a restarted manager finishes it."
	return map[string]apiextensionsv1.JSONSchemaProps{
		StatusKey: {
			Type:        "object",
			Description: "The schedule of rounds, as rudder's podchaos hook runs it, and what the rounds did.",
			Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"phase":           {Type: "string", Description: "Where the schedule is.", Enum: enum(PhaseRunning, PhaseCompleted, PhasePaused, PhaseBlocked)},
				"message":         str("Explanation of the phase: with Blocked, what refused the last round."),
				"generation":      integer("Spec generation the schedule runs for: a new spec starts it again."),
				"startedAt":       at("When the schedule started: rounds are due every interval from then."),
				"nextRoundAt":     at("When the next round is due; unset when none is left."),
				"rounds":          integer("Rounds done."),
				"lastRecovery":    str("Recovery time of the last round measured, as a Go duration."),
				"slowestRecovery": str("The slowest recovery time of the schedule, as a Go duration."),
				"lateRecoveries":  integer("Rounds after which the selected pods were not all Ready again within the interval."),
				"pending":         pending,
				"history": {Type: "array", Description: "The last rounds, the newest last.",
					Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &round}},
			},
		},
	}
}

func enum(values ...string) []apiextensionsv1.JSON {
	out := make([]apiextensionsv1.JSON, len(values))
	for i, v := range values {
		out[i] = apiextensionsv1.JSON{Raw: []byte(`"` + v + `"`)}
	}
	return out
}
