package shard

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/sharding"
)

func TestRange_AsKEP5866Writes(t *testing.T) {
	tests := []struct {
		s          Shard
		start, end string
	}{
		{Shard{}, "0x0000000000000000", "0x10000000000000000"},
		{Shard{0, 2}, "0x0000000000000000", "0x8000000000000000"},
		{Shard{1, 2}, "0x8000000000000000", "0x10000000000000000"},
		{Shard{3, 4}, "0xc000000000000000", "0x10000000000000000"},
		{Shard{1, 3}, "0x5555555555555555", "0xaaaaaaaaaaaaaaaa"},
	}
	for _, tt := range tests {
		if start, end := tt.s.Range(); start != tt.start || end != tt.end {
			t.Errorf("%v: Range = [%s, %s), want [%s, %s)", tt.s, start, end, tt.start, tt.end)
		}
	}
	if got, want := (Shard{0, 2}).Selector(), "shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')"; got != want {
		t.Errorf("Selector = %q, want %q", got, want)
	}
	if got := (Shard{0, 1}).Selector(); got != "" {
		t.Errorf("one shard: Selector = %q, want none", got)
	}
}

// TestOwns_SameSplitAsTheAPIServer: every namespace has exactly one shard,
// the one whose selector apimachinery's own matcher (the API server's) says
// matches it.
func TestOwns_SameSplitAsTheAPIServer(t *testing.T) {
	for _, count := range []int{2, 3, 4, 7} {
		shards := make([]int, count)
		for n := 0; n < 600; n++ {
			// FNV-1a's top bits change little with a name's last characters:
			// names that differ early spread (see the README's Sharding).
			ns := fmt.Sprintf("%03d-team", n)
			obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "x"}}
			owners := 0
			for i := 0; i < count; i++ {
				s := Shard{Index: i, Count: count}
				start, end := s.Range()
				matches, err := sharding.NewSelector(sharding.ShardRangeRequirement{Key: Key, Start: start, End: end}).Matches(obj)
				if err != nil {
					t.Fatal(err)
				}
				if matches != s.Owns(ns) {
					t.Fatalf("%s: Owns(%s) = %v, the API server's matcher says %v", s, ns, s.Owns(ns), matches)
				}
				if matches {
					owners++
					shards[i]++
					if Of(ns, count) != s {
						t.Errorf("Of(%s, %d) = %v, want %v", ns, count, Of(ns, count), s)
					}
				}
			}
			if owners != 1 {
				t.Fatalf("namespace %s has %d shards of %d, want exactly 1", ns, owners, count)
			}
		}
		for i, n := range shards {
			if n < 600/count/2 {
				t.Errorf("%d shards: shard %d owns %d of 600 namespaces: the split is far from even (%v)", count, i, n, shards)
			}
		}
	}
}

func TestExcluding(t *testing.T) {
	for _, ns := range []string{"default", "rudder-system", ""} {
		sel := Excluding(ns)
		matches := func(n string) bool {
			var reqs []sharding.ShardRangeRequirement
			for _, part := range strings.Split(sel, " || ") {
				quoted := strings.Split(part, "'") // shardRange(key, 'start', 'end')
				if len(quoted) != 5 {
					t.Fatalf("Excluding(%q) = %q: cannot read %q", ns, sel, part)
				}
				reqs = append(reqs, sharding.ShardRangeRequirement{Key: Key, Start: quoted[1], End: quoted[3]})
			}
			ok, err := sharding.NewSelector(reqs...).Matches(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: n}})
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		if matches(ns) {
			t.Errorf("Excluding(%q) = %q matches %q", ns, sel, ns)
		}
		if !matches(ns + "-other") {
			t.Errorf("Excluding(%q) = %q does not match another namespace", ns, sel)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, tt := range []struct {
		s    Shard
		want string
	}{
		{Shard{}, ""},
		{Shard{0, 1}, ""},
		{Shard{2, 3}, ""},
		{Shard{3, 3}, "--shard=3: want 0 to 2 for --shards=3"},
		{Shard{-1, 3}, "--shard=-1: want 0 to 2"},
		{Shard{1, 0}, "--shard=1 without --shards"},
		{Shard{0, -2}, "--shards=-2: want 1 or more"},
	} {
		err := tt.s.Check()
		if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: Check = %v, want %q", tt.s, err, tt.want)
		}
	}
}
