package resumable

import (
	"fmt"
	"time"
)

// EventKind names a step of a transfer.
type EventKind string

// The kinds of [Event]. Fields not listed for a kind are zero.
const (
	// EventStarted: an upload session was created (Size), or a download's
	// first response arrived (Size, Generation, Status).
	EventStarted EventKind = "started"
	// EventChunk: the server answered a chunk: Offset and Length of the
	// bytes sent, Status, Range (of a 308) and the resulting Persisted.
	EventChunk EventKind = "chunk"
	// EventSent: Length more bytes of the object went to the network in
	// a request body; Offset is the object offset they reached, Size the
	// object's (-1 while unknown). Reported
	// every 256 KiB of a body and when it ends, for every attempt, also
	// one that then fails: it counts bytes sent, not bytes persisted
	// (EventChunk says what the server kept). A body Insert holds in memory
	// (at most 256 KiB) counts once net/http has written it whole; if its
	// write fails, it counts nothing. It is emitted on the
	// goroutine that writes the request, while the transfer's own
	// goroutine waits for the reply; one transfer's events never overlap.
	EventSent EventKind = "sent"
	// EventProgress: a download wrote more bytes: Persisted is the object
	// offset reached (the number written so far, unless a slice), Length the bytes received since the previous
	// EventProgress (response body bytes, including any the download had
	// to skip). Sent every Options.ChunkSize bytes and when a response
	// ends.
	EventProgress EventKind = "progress"
	// EventStatus: the server answered a status query: Status, Range and
	// Persisted.
	EventStatus EventKind = "status"
	// EventRetry: a request failed with Err; the next attempt follows after
	// Wait. Attempt counts the attempts of the failing step, from 1.
	EventRetry EventKind = "retry"
	// EventResumed: the transfer continues from Offset, the server's
	// persisted offset (uploads) or the bytes already written (downloads),
	// after a failure or when a saved session is resumed.
	EventResumed EventKind = "resumed"
	// EventFinished: the object is complete and verified: Generation,
	// CRC32C (base64, as GCS writes it) and Size.
	EventFinished EventKind = "finished"
	// EventRewrite: a rewrite call (server-side copy) answered: Persisted
	// is the bytes rewritten so far (totalBytesRewritten), Size the
	// object's, Length the bytes this call added.
	EventRewrite EventKind = "rewrite"
	// EventCanceled: the session was deleted.
	EventCanceled EventKind = "canceled"
)

// Event describes one step of a transfer, for progress bars and logs. It
// never contains a session URI, an upload_id or a credential; Err is
// scrubbed of them too.
type Event struct {
	Kind       EventKind
	Bucket     string
	Object     string
	Offset     int64         // first byte of a chunk; offset resumed from
	Length     int64         // bytes in a chunk request; bytes sent (EventSent) or received (EventProgress)
	Persisted  int64         // bytes the server has (uploads) or bytes written (downloads)
	Size       int64         // object size; -1 while unknown
	Status     int           // HTTP status of the response
	Range      string        // Range header of a 308; "" means nothing persisted
	Attempt    int           // EventRetry: the failed attempt, 1-based
	Wait       time.Duration // EventRetry: the wait before the next attempt
	Err        error         // EventRetry: the cause
	Generation int64         // EventFinished (and download EventStarted)
	CRC32C     string        // EventFinished: the object's CRC32C, base64
	// Part and Parts name the part of a transfer an event is about: part
	// 3 of 8 is the third component of a composite upload or the third
	// slice of a sliced download, whose Bucket and Object are still the
	// user's object. 0 and 0 for a whole transfer.
	Part, Parts int
}

// String renders the event on one line, for logs.
func (e Event) String() string {
	s := fmt.Sprintf("%s gs://%s/%s", e.Kind, e.Bucket, e.Object)
	if e.Parts > 0 {
		s += fmt.Sprintf(" part=%d/%d", e.Part, e.Parts)
	}
	switch e.Kind {
	case EventChunk:
		s += fmt.Sprintf(" offset=%d length=%d status=%d range=%q persisted=%d", e.Offset, e.Length, e.Status, e.Range, e.Persisted)
	case EventStatus:
		s += fmt.Sprintf(" status=%d range=%q persisted=%d", e.Status, e.Range, e.Persisted)
	case EventRetry:
		s += fmt.Sprintf(" attempt=%d wait=%v err=%v", e.Attempt, e.Wait, e.Err)
	case EventResumed:
		s += fmt.Sprintf(" offset=%d", e.Offset)
	case EventProgress:
		s += fmt.Sprintf(" persisted=%d size=%d received=%d", e.Persisted, e.Size, e.Length)
	case EventRewrite:
		s += fmt.Sprintf(" rewritten=%d size=%d length=%d", e.Persisted, e.Size, e.Length)
	case EventSent:
		s += fmt.Sprintf(" offset=%d length=%d", e.Offset, e.Length)
	case EventStarted, EventFinished:
		s += fmt.Sprintf(" size=%d generation=%d crc32c=%s", e.Size, e.Generation, e.CRC32C)
	}
	return s
}
