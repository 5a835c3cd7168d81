package runner

import (
	"fmt"
)

// Shard selects the inputs of one shard of a run split over Count
// independent runs (Kubernetes Indexed Jobs): an input belongs to shard
// Index iff the FNV-1a 64-bit hash of its bytes, modulo Count, equals
// Index. Every run decides alone, from the input alone, so the shards are
// disjoint and cover every input whatever order or machine they run on.
// The zero Shard (Count 0) and Count 1 hold every input.
type Shard struct {
	Index, Count int
}

// Contains reports whether input belongs to the shard.
func (s Shard) Contains(input string) bool {
	if s.Count <= 1 {
		return true
	}
	return fnv1a64(input)%uint64(s.Count) == uint64(s.Index)
}

// fnv1a64 is FNV-1a, 64 bit, over the bytes of s (as hash/fnv's New64a,
// without its allocations).
func fnv1a64(s string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime
	}
	return h
}

// String returns "I/N", or "" for the zero Shard.
func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}
