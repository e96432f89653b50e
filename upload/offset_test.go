package upload

import (
	"context"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

// TestInterruptedChunkReportsBytesSent: a transfer cut off in the middle of
// a chunk says, beside the server's offset (0: nothing acknowledged), how
// many bytes of the cut-off request were sent, instead of "at offset 0"
// alone after megabytes went out.
func TestInterruptedChunkReportsBytesSent(t *testing.T) {
	// The server stops reading the chunk after 1 MiB until the client gives up;
	// the client cancels once it has handed 1 MiB to the transport, so the
	// chunk is never answered whichever comes first.
	srv := newServer(t, fakegcs.Options{Faults: []fakegcs.Fault{{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk,
		Kind: fakegcs.KindStall, AfterBytes: 1 << 20, Delay: time.Hour, Optional: true}}}) // optional: the cancel may land first
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newClient(t, srv, func(o *Options) {
		o.ChunkSize = 2 << 20
		o.SmallFileThreshold = 1
		o.ParallelUpload = ParallelOff
		o.OnEvent = func(e resumable.Event) {
			if e.Kind == resumable.EventSent && e.Offset >= 1<<20 { // Offset: the end of the bytes sent
				cancel()
			}
		}
	})
	r, err := c.UploadFile(ctx, writeTemp(t, t.TempDir(), "big", randBytes(2<<20, 9)), URL{testBucket, "big"}, UploadOptions{})
	if r.Status != StatusInterrupted {
		t.Fatalf("upload: %s (%v), want interrupted", r.Status, err)
	}
	m := regexp.MustCompile(`at offset 0 \(the server's; (\d+) more bytes were sent in a request cut off before its answer\)`).FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("error %q does not say what was sent", err)
	}
	if n, _ := strconv.Atoi(m[1]); n < 1<<20 || n > 2<<20 {
		t.Errorf("sent %d bytes, want between 1 MiB (the server read that much) and the chunk's 2 MiB", n)
	}
}
