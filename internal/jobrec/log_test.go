package jobrec

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/upload"
)

// A --log line keeps the fields its kind says something with (a chunk's
// offset 0, a retry's wait) and gives the error only as redact makes it.
func TestEvent(t *testing.T) {
	hide := func(s string) string { return strings.ReplaceAll(s, "upload_id=SECRET", "upload_id=REDACTED") }
	for _, tt := range []struct {
		e    resumable.Event
		want map[string]any
	}{
		{resumable.Event{Kind: resumable.EventChunk, Bucket: "b", Object: "o", Length: 8},
			map[string]any{"bucket": "b", "object": "o", "offset": int64(0), "length": int64(8), "persisted": int64(0)}},
		{resumable.Event{Kind: resumable.EventRetry, Bucket: "b", Object: "o", Attempt: 2, Wait: 1500 * time.Millisecond,
			Err: errors.New("PUT https://x/?upload_id=SECRET: 503")},
			map[string]any{"bucket": "b", "object": "o", "attempt": 2, "wait_seconds": 1.5, "error": "PUT https://x/?upload_id=REDACTED: 503"}},
		{resumable.Event{Kind: resumable.EventFinished, Bucket: "b", Object: "o", Size: 9, Generation: 7, CRC32C: "AAAAAQ==", Part: 1, Parts: 3},
			map[string]any{"bucket": "b", "object": "o", "size": int64(9), "generation": int64(7), "crc32c": "AAAAAQ==", "part": 1, "parts": 3}},
	} {
		if got := Event(tt.e, hide); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Event(%s)\n = %v\nwant %v", tt.e.Kind, got, tt.want)
		}
	}
	b := upload.BatchProgress{Concurrency: 4, LeastConcurrency: 2, Refusals: 3}
	if got := ConcurrencyOf(b); got != (Concurrency{Concurrency: 4, Least: 2, Refusals: 3}) {
		t.Errorf("ConcurrencyOf = %+v", got)
	}
}
