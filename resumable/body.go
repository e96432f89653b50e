package resumable

import (
	"errors"
	"io"
	"sync"
)

// errSealed is returned to a transport that reads a request body after its
// attempt is over (net/http may close, and so read, bodies from another
// goroutine after RoundTrip returns).
var errSealed = errors.New("resumable: request body read after its attempt ended")

// body is the request body of one chunk attempt. It hashes the bytes the
// transport takes into a tentative digest (the chunk is not yet persisted),
// counts them, reports progress to the watchdog, and keeps source errors
// apart from network errors. seal ends it: after seal no Read touches the
// digest or the source buffer, so the uploader may reuse both.
type body struct {
	mu     sync.Mutex
	r      io.Reader
	off    int64   // the chunk's offset in the object
	want   int64   // the body length promised in Content-Length
	sent   int64   // bytes handed to the transport
	d      *digest // tentative digest of the chunk; nil when not hashing
	dog    *watchdog
	srcErr error // a failure of the source itself
	sealed bool

	// For EventSent: the object bytes in the body (want, unless data is
	// framed, as in a multipart insert), the bytes before them (skip), the
	// object bytes reported so far, the object's size. emit nil: no events.
	emit       func(Event)
	data, skip int64
	reported   int64
	size       int64 // the object's, for the event; -1 unknown
}

// sentEvery is how often EventSent reports a body's progress.
const sentEvery = 256 << 10

func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sealed {
		return 0, errSealed
	}
	if b.srcErr != nil {
		return 0, b.srcErr
	}
	// The transport asking for more means the previous bytes were written.
	b.dog.moved()
	b.dog.pause()
	n, err := b.r.Read(p)
	b.dog.resume()
	if b.d != nil {
		b.d.Write(p[:n])
	}
	b.sent += int64(n)
	b.report(err != nil)
	switch {
	case err == io.EOF && b.sent < b.want:
		b.srcErr = &SourceError{Offset: b.off + b.sent, Err: io.ErrUnexpectedEOF}
		return n, b.srcErr
	case err != nil && err != io.EOF:
		b.srcErr = &SourceError{Offset: b.off + b.sent, Err: err}
		return n, b.srcErr
	}
	return n, err
}

// report emits EventSent for the object bytes handed to the transport since
// the last report, every sentEvery bytes and when the body ends or is
// sealed. It runs under b.mu, on the transport's goroutine (or the
// transfer's, in seal), so never after seal.
func (b *body) report(end bool) {
	if b.emit == nil {
		return
	}
	data := min(max(b.sent-b.skip, 0), b.data)
	if n := data - b.reported; n > 0 && (n >= sentEvery || end || data == b.data) {
		b.reported = data
		b.emit(Event{Kind: EventSent, Offset: b.off + data, Length: n, Size: b.size})
	}
}

// Close is a no-op: the source belongs to the caller.
func (b *body) Close() error { return nil }

// seal ends the body and returns what it saw: the tentative digest, bytes
// sent, and any source error.
func (b *body) seal() (d *digest, sent int64, srcErr error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.sealed {
		b.report(true) // what a cut-off attempt sent since the last report
	}
	b.sealed = true
	return b.d, b.sent, b.srcErr
}
