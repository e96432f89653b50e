package jobrec

import (
	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/upload"
)

// Concurrency is a "concurrency" line of --log: the requests the bucket's
// window lets be in flight now (at most -j), the fewest it has let so far,
// and the refusals so far.
type Concurrency struct {
	Concurrency int `json:"concurrency"`
	Least       int `json:"least_concurrency"`
	Refusals    int `json:"refusals"`
}

// ConcurrencyOf is the window and refusals a BatchProgress reports.
func ConcurrencyOf(b upload.BatchProgress) Concurrency {
	return Concurrency{Concurrency: b.Concurrency, Least: b.LeastConcurrency, Refusals: b.Refusals}
}

// Event is a transfer's event as one --log line: durations in seconds, the
// error as the text redact makes of it (a session URI's upload_id must not
// reach a log), fields that say nothing for its kind left out.
func Event(e resumable.Event, redact func(string) string) map[string]any {
	m := map[string]any{"bucket": e.Bucket, "object": e.Object}
	put := func(k string, v any, keep bool) {
		if keep {
			m[k] = v
		}
	}
	put("offset", e.Offset, e.Offset != 0 || e.Kind == resumable.EventChunk || e.Kind == resumable.EventResumed)
	put("length", e.Length, e.Length != 0)
	put("persisted", e.Persisted, e.Persisted != 0 || e.Kind == resumable.EventChunk || e.Kind == resumable.EventStatus)
	put("size", e.Size, e.Size != 0)
	put("status", e.Status, e.Status != 0)
	put("range", e.Range, e.Range != "")
	put("attempt", e.Attempt, e.Attempt != 0)
	put("wait_seconds", e.Wait.Seconds(), e.Kind == resumable.EventRetry)
	put("generation", e.Generation, e.Generation != 0)
	put("crc32c", e.CRC32C, e.CRC32C != "")
	put("part", e.Part, e.Parts != 0)
	put("parts", e.Parts, e.Parts != 0)
	if e.Err != nil {
		m["error"] = redact(e.Err.Error())
	}
	return m
}
