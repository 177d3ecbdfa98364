package status

import (
	"maps"
	"slices"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// OwnedKeys are the keys of .status that Status writes, removed when unset.
var OwnedKeys = []string{"observedGeneration", "phase", "message", "replicas", "readyReplicas", "release", "history", "failures", "published", "lastHandledReconcileAt", "lastHandledTestAt", "actingAs"}

// maxConditionMessage is the most characters a condition's message may hold:
// metav1.Condition's limit, which the CRDs rudder generates carry
// (internal/crdgen). The API server refuses a whole status write for one
// longer message, and an error (a chart's failed render, a hook's) can be.
const maxConditionMessage = 32768

// cutMark ends a condition message cut to fit.
const cutMark = "… (cut)"

// FitConditions cuts every condition message of status (a status as
// written) that is longer than maxConditionMessage characters, counted as
// the API server counts them (runes), to fit, ending it with cutMark. It
// runs after redaction, so that a cut never leaves part of a redacted value
// behind. It changes no map or list of status in place: they may be the
// cached resource's.
func FitConditions(status map[string]any) {
	list, _ := status["conditions"].([]any)
	var out []any
	for i, item := range list {
		c, _ := item.(map[string]any)
		msg, _ := c["message"].(string)
		if utf8.RuneCountInString(msg) <= maxConditionMessage {
			continue
		}
		if out == nil {
			out = slices.Clone(list)
		}
		cut := make(map[string]any, len(c))
		for k, v := range c {
			cut[k] = v
		}
		cut["message"] = Cut(msg, maxConditionMessage)
		out[i] = cut
	}
	if out != nil {
		status["conditions"] = out
	}
}

// Cut returns msg cut to at most limit runes, ending with cutMark
// when cut. It cuts between runes, so valid UTF-8 stays valid.
func Cut(msg string, limit int) string {
	if utf8.RuneCountInString(msg) <= limit {
		return msg
	}
	keep, n := limit-utf8.RuneCountInString(cutMark), 0
	for i := range msg {
		if n == keep {
			return msg[:i] + cutMark
		}
		n++
	}
	return msg
}

// MergePatch returns a JSON merge patch turning current into next. It sends
// every key of next, not a diff against the cached object: a diff would leave
// out what the stale cache already "has" and the server does not. A key of
// current that next lacks is sent as null, at any depth, since a merge patch
// merges maps (status.network losing "netmask", say).
func MergePatch(current, next map[string]any) map[string]any {
	patch := make(map[string]any, len(next))
	for k, v := range next {
		cm, wasMap := current[k].(map[string]any)
		nm, isMap := v.(map[string]any)
		if wasMap && isMap {
			patch[k] = MergePatch(cm, nm)
			continue
		}
		patch[k] = v
	}
	for k := range current {
		if _, kept := next[k]; !kept {
			patch[k] = nil
		}
	}
	return patch
}

// ConditionOf returns the condition typ of obj's status as read, or nil.
func ConditionOf(obj *unstructured.Unstructured, typ string) *metav1.Condition {
	list, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok || m["type"] != typ {
			continue
		}
		var c metav1.Condition
		if runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c) == nil {
			return &c
		}
	}
	return nil
}

// ProgressOnly reports whether next, the status about to be written, differs
// from current, the status as read, only in a rollout's progress.
func ProgressOnly(current, next map[string]any) bool {
	return current != nil && equality.Semantic.DeepEqual(withoutProgress(current), withoutProgress(next))
}

// withoutProgress returns st without the keys a rollout's progress moves:
// the replica counts, the message, and the Ready condition's message.
func withoutProgress(st map[string]any) map[string]any {
	out := maps.Clone(st)
	delete(out, "replicas")
	delete(out, "readyReplicas")
	delete(out, "message")
	conds, ok := st["conditions"].([]any)
	if !ok {
		return out
	}
	kept := make([]any, len(conds))
	for i, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == ConditionReady {
			m = maps.Clone(m)
			delete(m, "message")
			c = m
		}
		kept[i] = c
	}
	out["conditions"] = kept
	return out
}
