package upload

import (
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"io"
	"testing"

	"github.com/gcsput/gcsput/resumable"
)

// A component's CRC32C computed ahead is its section's; it stops with the
// context; a source without one tells resumable to hash the bytes itself.
func TestCRCAhead(t *testing.T) {
	data := randBytes(3<<20+17, 91)
	sec := io.NewSectionReader(bytes.NewReader(data), 1<<20, 2<<20)
	src := componentSource{SectionReader: sec, crc: crcAheadOf(context.Background(), sec)}
	h, err := src.Hashes()
	if want := crc32.Checksum(data[1<<20:3<<20], castagnoli); err != nil || !h.HasCRC32C || h.CRC32C != want {
		t.Fatalf("hashes %+v, %v; want crc32c %08x", h, err, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := crcAheadOf(ctx, sec).wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	var hs resumable.HashedSource = componentSource{SectionReader: sec}
	if _, err := hs.Hashes(); !errors.Is(err, errNoCRCAhead) {
		t.Fatalf("no crc ahead: %v", err)
	}
}
