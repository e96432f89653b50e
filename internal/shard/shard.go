// Package shard splits a bulk transfer among N independent workers of a batch
// engine, with no coordinator: worker I of N takes exactly the sources whose
// relative path hashes to I.
//
// The hash is FNV-1a 64 of the path's bytes (relative to the transfer's root,
// "/" separators, as it will be named under the destination), mixed by
// MurmurHash3's 64-bit finalizer (fmix64), modulo N. FNV-1a alone splits
// badly: its low k bits depend only on the low k bits of each byte (modulo
// 4, "aaa", "eee" and "iii" always shared a shard), and its high bits
// hardly move with the last bytes of a name. It depends on nothing but the
// path, so every worker that sees the same tree makes the same split,
// whenever it starts and whatever the others have done.
package shard

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
)

// Spec is one worker's share: Index of Count. The zero value is "no
// sharding" (one worker takes everything).
type Spec struct {
	Index, Count int
}

// ErrUsage marks a spec or environment that cannot name a shard.
var ErrUsage = errors.New("shard")

// Parse reads "I/N" (0 ≤ I < N).
func Parse(s string) (Spec, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, ok1 := digits(is)
	n, ok2 := digits(ns)
	if !ok || !ok1 || !ok2 {
		return Spec{}, fmt.Errorf("%w: --shard %q: want I/N (for example 0/4) or auto", ErrUsage, s)
	}
	return check(Spec{i, n}, "--shard "+s)
}

func check(sp Spec, from string) (Spec, error) {
	if sp.Count < 1 || sp.Index < 0 || sp.Index >= sp.Count {
		return Spec{}, fmt.Errorf("%w: %s gives shard %d of %d: want 0 ≤ index < count", ErrUsage, from, sp.Index, sp.Count)
	}
	return sp, nil
}

// Enabled reports whether the spec splits the work at all.
func (sp Spec) Enabled() bool { return sp.Count > 1 }

// String is the spec as "I/N"; "" when not sharded.
func (sp Spec) String() string {
	if sp.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", sp.Index, sp.Count)
}

// Owns reports whether path belongs to this shard.
func (sp Spec) Owns(path string) bool {
	if sp.Count <= 1 {
		return true
	}
	return Of(path, sp.Count) == sp.Index
}

// Of returns the shard of path among n: fmix64(FNV-1a 64 of its bytes)
// modulo n.
func Of(path string, n int) int {
	h := fnv.New64a()
	h.Write([]byte(path))
	return int(fmix64(h.Sum64()) % uint64(n))
}

// fmix64 is MurmurHash3's finalizer: every input bit moves every output bit.
func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}
