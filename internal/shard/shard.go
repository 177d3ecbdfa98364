package shard

import (
	"fmt"
	"math/big"

	"k8s.io/apimachinery/pkg/sharding"
)

// Key is the field a shard's range is over.
const Key = "object.metadata.namespace"

// Shard is shard Index of Count. The zero value, and any Count below 2, is
// one shard owning everything.
type Shard struct {
	Index, Count int
}

// Check says what is wrong with s, naming the flags that set it.
func (s Shard) Check() error {
	switch {
	case s.Count < 0:
		return fmt.Errorf("--shards=%d: want 1 or more shards (1: no sharding)", s.Count)
	case s.Count <= 1 && s.Index != 0:
		return fmt.Errorf("--shard=%d without --shards: set --shards to the number of shards, more than %d", s.Index, s.Index)
	case s.Count > 1 && (s.Index < 0 || s.Index >= s.Count):
		return fmt.Errorf("--shard=%d: want 0 to %d for --shards=%d", s.Index, s.Count-1, s.Count)
	}
	return nil
}

// Sharded reports whether s owns only part of the namespaces.
func (s Shard) Sharded() bool { return s.Count > 1 }

// String names s as the logs and Lease names do: "1-of-3", or "all".
func (s Shard) String() string {
	if !s.Sharded() {
		return "all"
	}
	return fmt.Sprintf("%d-of-%d", s.Index, s.Count)
}

// Range returns s's bounds as the API server takes them: 0x-prefixed
// lowercase hex, the start inclusive and padded to 16 digits, the end
// exclusive (0x10000000000000000 for the last shard).
func (s Shard) Range() (start, end string) {
	if !s.Sharded() {
		return hex(big.NewInt(0)), "0x10000000000000000"
	}
	return hex(bound(s.Index, s.Count)), hex(bound(s.Index+1, s.Count))
}

// bound is i·2⁶⁴/n, rounded down.
func bound(i, n int) *big.Int {
	b := new(big.Int).Lsh(big.NewInt(int64(i)), 64)
	return b.Quo(b, big.NewInt(int64(n)))
}

func hex(v *big.Int) string { return fmt.Sprintf("0x%016x", v) }

// Selector is s as a shard selector (ListOptions.ShardSelector); "" when s
// owns everything.
func (s Shard) Selector() string {
	if !s.Sharded() {
		return ""
	}
	start, end := s.Range()
	return sharding.NewSelector(sharding.ShardRangeRequirement{Key: Key, Start: start, End: end}).String()
}

// Owns reports whether namespace is s's. A cluster-scoped object (namespace
// "") belongs to the shard that owns "".
func (s Shard) Owns(namespace string) bool { return s.owner()(namespace) }

// owner returns Owns with s's bounds computed once, for the informers,
// which ask for every object they receive.
func (s Shard) owner() func(namespace string) bool {
	if !s.Sharded() {
		return func(string) bool { return true }
	}
	start, end := s.Range()
	return func(namespace string) bool {
		h := "0x" + sharding.HashField(namespace)
		return !sharding.HexLess(h, start) && sharding.HexLess(h, end)
	}
}

// Of returns the shard of count that owns namespace.
func Of(namespace string, count int) Shard {
	for i := 0; i < count; i++ {
		if s := (Shard{Index: i, Count: count}); s.Owns(namespace) {
			return s
		}
	}
	return Shard{}
}

// Excluding is a selector that matches every namespace but ns: what a probe
// of the API server's support lists with.
func Excluding(ns string) string {
	h, _ := new(big.Int).SetString(sharding.HashField(ns), 16)
	next := new(big.Int).Add(h, big.NewInt(1))
	top := new(big.Int).Lsh(big.NewInt(1), 64)
	var reqs []sharding.ShardRangeRequirement
	if h.Sign() > 0 {
		reqs = append(reqs, sharding.ShardRangeRequirement{Key: Key, Start: hex(big.NewInt(0)), End: hex(h)})
	}
	if next.Cmp(top) < 0 {
		reqs = append(reqs, sharding.ShardRangeRequirement{Key: Key, Start: hex(next), End: hex(top)})
	}
	return sharding.NewSelector(reqs...).String()
}
