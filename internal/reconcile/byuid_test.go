package reconcile

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestByUID(t *testing.T) {
	var s byUID[int]
	if _, ok := s.get("a"); ok {
		t.Fatal("an empty byUID holds a")
	}
	s = s.set("a", 1).set("b", 2).set("a", 3)
	if v, ok := s.get("a"); !ok || v != 3 || len(s) != 2 {
		t.Fatalf("after setting a, b, a again: a = %d (%t), %d values; want 3 and 2 values", v, ok, len(s))
	}
	s = s.keep(func(uid types.UID, _ int) bool { return uid != "a" })
	if _, ok := s.get("a"); ok || len(s) != 1 {
		t.Fatalf("a kept, or b lost: %v", s)
	}
	if v, ok := s.get("b"); !ok || v != 2 {
		t.Fatalf("b = %d (%t), want 2", v, ok)
	}
}
