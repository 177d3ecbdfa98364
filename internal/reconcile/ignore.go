package reconcile

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/rudder-operator/rudder/internal/watches"
)

// ignoring returns want with the fields the kind's drift ignore rules name
// taken from live: what another controller set there is then neither drift
// nor overwritten by a repair. A field live lacks is dropped from want.
// want itself is returned when no rule applies to it.
func ignoring(d watches.Drift, want, live *unstructured.Unstructured) *unstructured.Unstructured {
	paths := d.Ignored(want.GetKind(), want.GetName())
	if len(paths) == 0 {
		return want
	}
	out := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(want.Object)}
	for _, p := range paths {
		v, found := lookup(live.Object, p)
		graft(out.Object, p, v, found)
	}
	return out
}

// lookup returns the value at pointer p in obj.
func lookup(obj any, p watches.Pointer) (any, bool) {
	cur := obj
	for _, t := range p {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[t]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, ok := index(t)
			if !ok || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// graft sets the value at pointer p in obj to v, or removes it when found is
// false. A path obj does not have up to p's parent is left alone: there is
// nothing of want's to replace. p has at least one token.
func graft(obj any, p watches.Pointer, v any, found bool) {
	parent, ok := lookup(obj, p[:len(p)-1])
	if !ok {
		return
	}
	last := p[len(p)-1]
	switch c := parent.(type) {
	case map[string]any:
		if found {
			c[last] = runtime.DeepCopyJSONValue(v)
		} else {
			delete(c, last)
		}
	case []any:
		i, ok := index(last)
		if !ok || i >= len(c) {
			return
		}
		if found {
			c[i] = runtime.DeepCopyJSONValue(v)
			return
		}
		// live's list is shorter: want's list loses the element too.
		graft(obj, p[:len(p)-1], append(c[:i:i], c[i+1:]...), true)
	}
}

// index returns the list index a pointer token names, if it names one:
// digits without a leading zero.
func index(t string) (int, bool) {
	if t == "" || t != "0" && strings.HasPrefix(t, "0") {
		return 0, false
	}
	i, err := strconv.Atoi(t)
	return i, err == nil && i >= 0
}
