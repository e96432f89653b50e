package resumable

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// A stream's buffer grows with what the stream delivered, never to the
// chunk size up front: --chunk-size 1GiB on a short stdin allocates about
// what was read.
func TestStreamBufferGrowsWithInput(t *testing.T) {
	for _, n := range []int{100, 3 << 20} {
		data := testData(n)
		s := newStreamSource(bytes.NewReader(data), -1, MaxStreamChunkSize)
		c, err := s.chunk(0)
		if err != nil {
			t.Fatal(err)
		}
		if c.n != int64(n) || !c.final {
			t.Fatalf("chunk of %d bytes (final %v), want %d", c.n, c.final, n)
		}
		if limit := max(2*n, firstStreamBuf); cap(s.buf) > limit {
			t.Errorf("%d-byte stream: buffer of %d bytes, want at most %d", n, cap(s.buf), limit)
		}
		got := new(bytes.Buffer)
		got.ReadFrom(c.open())
		if !bytes.Equal(got.Bytes(), data) {
			t.Errorf("%d-byte stream: chunk bytes differ", n)
		}
	}
}

// A chunk size that cannot be held in memory is refused before any request.
func TestStreamChunkSizeLimit(t *testing.T) {
	e := newEnv(t, kib256)
	s, err := e.c.Start(context.Background(), ObjectSpec{Bucket: "bkt", Name: "o", Size: -1})
	if err != nil {
		t.Fatal(err)
	}
	s.ChunkSize = 4 << 30
	_, err = e.c.UploadStream(context.Background(), s, strings.NewReader("x"))
	if err == nil || !strings.Contains(err.Error(), "chunk size 4294967296 is too large for a stream, whose chunk is held in memory: the limit is 1073741824 (1 GiB)") {
		t.Fatalf("err = %v", err)
	}
	if st, _ := e.srv.LastSession("bkt", "o"); st.Chunks != 0 {
		t.Errorf("%d chunks sent", st.Chunks)
	}
}
