package preview

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/rudder-operator/rudder/internal/redact"
)

// masker masks, in the objects a diff shows, the values the release takes
// from Secrets (valuesFrom) that a chart put in other objects: a
// Deployment's env var, a ConfigMap. Like Secret data, a value the new
// revision keeps shows as the same mask on both sides, one that changes as
// "*** (before)" and "*** (after)". A nil masker masks nothing.
type masker struct {
	replacer *strings.Replacer
}

// newMasker masks before, the values the deployed revision took from
// Secrets, and after, those the new one would take. Values shorter than
// redact.MinLength are not looked for: they would mask too much.
func newMasker(before, after []string) *masker {
	masks := map[string]string{}
	for _, v := range before {
		masks[v] = maskBefore
	}
	for _, v := range after {
		if masks[v] == maskBefore || masks[v] == mask {
			masks[v] = mask
		} else {
			masks[v] = maskAfter
		}
	}
	var olds []string
	for v := range masks {
		if len(v) < redact.MinLength {
			continue
		}
		olds = append(olds, v)
		if q := strconv.Quote(v); q[1:len(q)-1] != v {
			olds = append(olds, q[1:len(q)-1]) // as a YAML or JSON string escapes it
			masks[q[1:len(q)-1]] = masks[v]
		}
	}
	if len(olds) == 0 {
		return nil
	}
	// The longest first: a value inside another is not left half masked.
	sort.Slice(olds, func(i, j int) bool {
		return len(olds[i]) > len(olds[j]) || len(olds[i]) == len(olds[j]) && olds[i] < olds[j]
	})
	pairs := make([]string, 0, 2*len(olds))
	for _, v := range olds {
		pairs = append(pairs, v, masks[v])
	}
	return &masker{replacer: strings.NewReplacer(pairs...)}
}

// apply returns a copy of obj with the values masked; obj for a nil masker.
func (m *masker) apply(obj map[string]any) map[string]any {
	if m == nil || obj == nil {
		return obj
	}
	out, _ := m.value(obj).(map[string]any)
	return out
}

func (m *masker) value(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[m.replacer.Replace(k)] = m.value(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = m.value(e)
		}
		return out
	case string:
		return m.replacer.Replace(t)
	}
	return v
}

// String masks s, such as an error's message.
func (m *masker) String(s string) string {
	if m == nil {
		return s
	}
	return m.replacer.Replace(s)
}

// previousSecrets returns the strings and numbers of old, the values of the
// deployed revision, at the paths where shadow (the values a digest is
// computed from) and vals differ: the parts taken from Secrets then, if the
// sources have not moved.
func previousSecrets(vals, shadow, old any) []string {
	switch s := shadow.(type) {
	case map[string]any:
		v, _ := vals.(map[string]any)
		o, _ := old.(map[string]any)
		var out []string
		for k := range s {
			out = append(out, previousSecrets(v[k], s[k], o[k])...)
		}
		return out
	case []any:
		v, _ := vals.([]any)
		o, _ := old.([]any)
		var out []string
		for i := range s {
			if i < len(v) && i < len(o) {
				out = append(out, previousSecrets(v[i], s[i], o[i])...)
			}
		}
		return out
	}
	if sameJSON(shadow, vals) {
		return nil
	}
	return leaves(old)
}

// leaves returns the strings and numbers of v, as strings.
func leaves(v any) []string {
	switch t := v.(type) {
	case map[string]any:
		var out []string
		for _, e := range t {
			out = append(out, leaves(e)...)
		}
		return out
	case []any:
		var out []string
		for _, e := range t {
			out = append(out, leaves(e)...)
		}
		return out
	case string:
		return []string{t}
	case nil, bool:
		return nil
	}
	return []string{fmt.Sprint(v)}
}
