package status

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// statusKeyMaxLength bounds a published status key.
const statusKeyMaxLength = 63

// statusKeyPattern is a field name as Kubernetes APIs spell them (camelCase).
var statusKeyPattern = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)

// Publication is what the deployed revision publishes into status.
type Publication struct {
	known  bool           // false: no deployed revision to read; status stays as it is
	values map[string]any // status key → map of strings
	keys   []string       // the published keys, sorted (status.published)
	from   []string       // "status.<key> from <Kind>/<name>", in key order
	errs   []string       // why keys were refused
}

// Publish reads the status keys the deployed revision's objects Publish.
// Keys in taken (rudder's and the hooks' own) are refused.
func Publish(o *Observation, taken map[string]bool) Publication {
	p := Publication{values: map[string]any{}}
	if o.Deployed == nil {
		return p
	}
	p.known = true
	owners := map[string]string{}
	for _, obj := range o.Deployed.Objects {
		key, ok := obj.GetAnnotations()[AnnotationStatusKey]
		if !ok {
			continue
		}
		ref := obj.GetKind() + "/" + obj.GetName()
		data, err := publishable(obj, key, taken)
		if err == nil && owners[key] != "" {
			err = fmt.Errorf("status key %q is published by %s too; each key needs one object", key, owners[key])
			delete(p.values, key)
		}
		if err != nil {
			p.errs = append(p.errs, fmt.Sprintf("%s: %v", ref, err))
			continue
		}
		owners[key] = ref
		p.values[key] = data
	}
	for key := range p.values {
		p.keys = append(p.keys, key)
	}
	sort.Strings(p.keys)
	for _, key := range p.keys {
		p.from = append(p.from, fmt.Sprintf("status.%s from %s", key, owners[key]))
	}
	return p
}

// publishable returns obj's .data for status key key, or why it cannot be.
func publishable(obj *unstructured.Unstructured, key string, taken map[string]bool) (map[string]any, error) {
	switch {
	case !statusKeyPattern.MatchString(key) || len(key) > statusKeyMaxLength:
		return nil, fmt.Errorf("annotation %s=%q is not a status field name (lowerCamelCase letters and digits, at most %d)",
			AnnotationStatusKey, key, statusKeyMaxLength)
	case taken[key]:
		return nil, fmt.Errorf("status key %q belongs to rudder or a hook; choose another name in annotation %s", key, AnnotationStatusKey)
	case obj.GetKind() == "Secret" && obj.GroupVersionKind().Group == "":
		return nil, fmt.Errorf("a Secret's data is never copied into status, which everyone who can read the resource reads; publish a ConfigMap")
	}
	raw, found, err := unstructured.NestedFieldNoCopy(obj.Object, "data")
	if err != nil || !found || raw == nil {
		return map[string]any{}, nil
	}
	in, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf(".data is a %T, want a map of strings", raw)
	}
	out := make(map[string]any, len(in))
	for k, v := range in {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf(".data.%s is a %T, want a string", k, v)
		}
		out[k] = s
	}
	return out, nil
}

// TakenKeys are the status keys a chart may not publish: rudder's own and the
// ones this reconcile's hooks write.
func TakenKeys(hookKeys map[string]any) map[string]bool {
	taken := map[string]bool{"conditions": true}
	for _, k := range OwnedKeys {
		taken[k] = true
	}
	for k := range hookKeys {
		taken[k] = true
	}
	return taken
}

// Into records the publication in st: status.published and the Published
// condition. prev is status.published as last written.
func (p Publication) Into(st *Status, prev []string, now time.Time) {
	if !p.known {
		st.Published = prev
		return
	}
	st.Published = p.keys
	if len(p.keys) == 0 && len(p.errs) == 0 {
		meta.RemoveStatusCondition(&st.Conditions, ConditionPublished)
		return
	}
	c := metav1.Condition{Type: ConditionPublished, Status: metav1.ConditionTrue, Reason: ReasonPublished,
		Message: strings.Join(p.from, "; "), ObservedGeneration: st.ObservedGeneration, LastTransitionTime: metav1.NewTime(now)}
	if len(p.errs) > 0 {
		c.Status, c.Reason = metav1.ConditionFalse, ReasonStatusKeyRefused
		c.Message = "The chart publishes status keys rudder cannot copy: " + strings.Join(p.errs, "; ")
	}
	meta.SetStatusCondition(&st.Conditions, c)
}

// Apply writes the published keys into next, the status about to be written,
// and removes the keys of prev (status.published as last written) that are no
// longer published.
func (p Publication) Apply(next map[string]any, prev []string) {
	if !p.known {
		return
	}
	for _, k := range prev {
		if !slices.Contains(p.keys, k) && !slices.Contains(OwnedKeys, k) {
			delete(next, k)
		}
	}
	for k, v := range p.values {
		next[k] = v
	}
}
