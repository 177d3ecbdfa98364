package reconcile

import (
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// byUID holds a value for each of one release's few stored revisions, under
// its storage Secret's UID. A release keeps two or three; as a slice they
// take a fraction of a map's memory (a map of up to eight holds eight slots).
type byUID[V any] []uidValue[V]

type uidValue[V any] struct {
	uid types.UID
	v   V
}

func (s byUID[V]) get(uid types.UID) (V, bool) {
	for _, e := range s {
		if e.uid == uid {
			return e.v, true
		}
	}
	var zero V
	return zero, false
}

// set returns s with v under uid.
func (s byUID[V]) set(uid types.UID, v V) byUID[V] {
	for i := range s {
		if s[i].uid == uid {
			s[i].v = v
			return s
		}
	}
	return append(s, uidValue[V]{uid, v})
}

// keep returns s without the values whose UID keep refuses.
func (s byUID[V]) keep(keep func(types.UID, V) bool) byUID[V] {
	return slices.DeleteFunc(s, func(e uidValue[V]) bool { return !keep(e.uid, e.v) })
}
