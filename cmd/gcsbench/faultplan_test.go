package main

import (
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// The reset of the first request is within the first chunk, or within the
// object when it is smaller.
func TestFixedResetWithinFirstChunk(t *testing.T) {
	const chunk = 16 << 20
	for size, want := range map[int64][2]int64{1 << 30: {8 << 20, 4 << 20}, 4 << 20: {2 << 20, 1 << 20}} {
		for _, f := range fixedFaults(opUpload, size, chunk) {
			if f.Kind == fakegcs.KindReset && (f.AfterBytes != want[0] || f.Persist != want[1] || f.Offset == nil || *f.Offset != 0) {
				t.Errorf("size %d: reset after %d, persisting %d, at %v; want %v at 0", size, f.AfterBytes, f.Persist, f.Offset, want)
			}
		}
	}
}

// Every fixed fault fires once, and the download faults count downloads
// only, so a metadata get does not use them up.
func TestFixedFaultsAreOnceAndMediaOnly(t *testing.T) {
	for _, op := range []string{opUpload, opDownload} {
		for _, f := range fixedFaults(op, 1<<30, 16<<20) {
			if f.Times != 0 || f.Probability != 0 || f.Skip != 0 {
				t.Errorf("%s %v: times %d, probability %v, skip %d", op, f, f.Times, f.Probability, f.Skip)
			}
			if op == opDownload && f.Phase != fakegcs.PhaseMedia {
				t.Errorf("%v: phase %q, want %q", f, f.Phase, fakegcs.PhaseMedia)
			}
		}
	}
}
