package main

import (
	"fmt"
	"math"
	"testing"
)

// The sizes --chunk-size suggests are sizes: near the top of int64, the next multiple of
// 256 KiB does not exist, and is not suggested as -9223372036854775808 B.
func TestChunkSizeSuggestionNeverOverflows(t *testing.T) {
	for _, n := range []int64{math.MaxInt64, math.MaxInt64 - 1000, math.MaxInt64 - chunkAlign + 2} {
		err := checkChunkSize(n)
		lo := n / chunkAlign * chunkAlign
		want := fmt.Sprintf("8.0 EiB is not a multiple of 256 KiB (GCS rejects such chunks); try %d B", lo)
		if err == nil || err.Error() != want {
			t.Errorf("checkChunkSize(%d) = %v; want %q", n, err, want)
		}
	}
}
