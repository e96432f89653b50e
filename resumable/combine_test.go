package resumable_test

import (
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gcsput/gcsput/resumable"
)

// CombineCRC32C over random splits of random data equals hash/crc32 of the
// whole, for empty parts, one-byte parts and every split of a short buffer.
func TestCombineCRC32CMatchesHashCRC32(t *testing.T) {
	tab := crc32.MakeTable(crc32.Castagnoli)
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	check := func(parts ...[]byte) {
		t.Helper()
		var whole []byte
		var got uint32
		for _, p := range parts {
			got = resumable.CombineCRC32C(got, crc32.Checksum(p, tab), int64(len(p)))
			whole = append(whole, p...)
		}
		if want := crc32.Checksum(whole, tab); got != want {
			t.Fatalf("%d parts of %d bytes: combined %08x, want %08x", len(parts), len(whole), got, want)
		}
	}
	for i := 0; i <= 64; i++ {
		check(data[:i], data[i:64])
	}
	for range 200 {
		n := 1 + rng.IntN(32)
		cuts := []int{0, len(data)}
		for range n - 1 {
			cuts = append(cuts, rng.IntN(len(data)+1))
		}
		slices.Sort(cuts)
		var parts [][]byte
		for i := 1; i < len(cuts); i++ {
			parts = append(parts, data[cuts[i-1]:cuts[i]])
		}
		check(parts...)
	}
}

// The length enters only through x^(8·len): an empty B leaves A's CRC, and
// appending n zero bytes twice equals appending 2n once, for lengths past
// what the split test reaches.
func TestCombineCRC32CLargeLengths(t *testing.T) {
	a := crc32.Checksum([]byte("gcsput"), crc32.MakeTable(crc32.Castagnoli))
	if got := resumable.CombineCRC32C(a, 0, 0); got != a {
		t.Fatalf("empty B: %08x, want %08x", got, a)
	}
	// Appending n zero bytes twice equals appending 2n zero bytes once.
	zero := func(n int64) uint32 { return crc32.Checksum(make([]byte, n), crc32.MakeTable(crc32.Castagnoli)) }
	for _, n := range []int64{1, 3, 1000, 1 << 16, 3 << 20} {
		twice := resumable.CombineCRC32C(resumable.CombineCRC32C(a, zero(n), n), zero(n), n)
		once := resumable.CombineCRC32C(a, zero(2*n), 2*n)
		if twice != once {
			t.Fatalf("n=%d: %08x != %08x", n, twice, once)
		}
	}
}
