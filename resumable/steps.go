package resumable

import (
	"context"
	"fmt"
	"net/http"

	storage "google.golang.org/api/storage/v1"
)

// reply is what a chunk or status request learned: either the finished
// object, or the persisted offset and the Range it came from.
type reply struct {
	status    int
	rng       string
	persisted int64
	obj       *storage.Object
}

// readReply interprets the answer to a request on the session URI.
func (u *upload) readReply(resp *http.Response) (reply, error) {
	r := reply{status: resp.StatusCode}
	// With "X-GUploader-No-308: yes" GCS answers 200 and puts 308 here;
	// we do not ask for it, but a proxy might.
	if resp.Header.Get("X-Http-Status-Code-Override") == "308" {
		r.status = http.StatusPermanentRedirect
	}
	switch {
	case r.status == http.StatusPermanentRedirect:
		// 308 "Resume Incomplete": Range says what is persisted; no
		// Range means nothing is.
		r.rng = resp.Header.Get("Range")
		p, err := parseRange(r.rng)
		if err != nil {
			return r, fmt.Errorf("%w: %w", errProtocol, err)
		}
		r.persisted = p
		return r, nil
	case r.status == http.StatusOK || r.status == http.StatusCreated:
		r.obj = new(storage.Object)
		if err := decodeJSON(resp, r.obj); err != nil {
			return r, err // a truncated body: retryable, the status query will tell
		}
		return r, nil
	}
	return r, statusError(resp, secrets(u.s.URI), true)
}

// sendChunk sends the chunk at the server's offset and records what the
// server kept. The final chunk carries X-Goog-Hash, so the server refuses to
// create an object whose checksum differs from the data we read.
func (u *upload) sendChunk(ctx context.Context) (*storage.Object, error) {
	off := u.s.Persisted
	if err := u.ack(off, nil); err != nil { // a resumed session whose hash state was missing
		return nil, err
	}
	c, err := u.src.chunk(off)
	if err != nil {
		return nil, err
	}
	b := &body{r: c.open(), off: off, want: c.n, emit: u.emit, data: c.n, size: u.s.Size}
	if c.final {
		if err := u.prepareFinal(c); err != nil {
			return nil, err
		}
		if err := u.src.checkSource(off); err != nil {
			return nil, err
		}
	} else {
		b.d = u.d.clone() // hashed while sent; adopted if the server keeps it all
	}
	req, err := http.NewRequest(http.MethodPut, u.s.URI, http.NoBody)
	if err != nil {
		return nil, err
	}
	if c.n > 0 {
		req.Body, req.ContentLength = b, c.n
	}
	req.Header.Set("Content-Range", c.contentRange().String())
	u.s.Key.set(req.Header)
	if c.final {
		req.Header.Set("X-Goog-Hash", u.final.String())
	}
	var r reply
	answered := false
	err = u.c.send(ctx, "chunk", req, b, func(resp *http.Response, _ *watchdog) (err error) {
		answered = true
		r, err = u.readReply(resp)
		return err
	})
	tentative, sent, _ := b.seal()
	if err != nil && !answered {
		u.unacked = sent // cut off before an answer: what went out is not acknowledged
	}
	switch {
	case err != nil && c.final && isHashRejection(err):
		return nil, &ChecksumError{Object: u.s.name(), Local: *u.final, Err: err}
	case err != nil:
		return nil, err
	case r.obj != nil:
		u.emit(Event{Kind: EventChunk, Offset: off, Length: c.n, Status: r.status, Persisted: off + c.n, Size: off + c.n})
		return r.obj, nil
	}
	if err := u.ack(r.persisted, tentative); err != nil {
		return nil, err
	}
	u.lastChunk, u.lastRange = c.n, r.rng
	u.emit(Event{Kind: EventChunk, Offset: off, Length: c.n, Status: r.status, Range: r.rng, Persisted: u.s.Persisted, Size: u.s.Size})
	return nil, nil
}

// prepareFinal computes the full-object hashes before the final chunk is
// sent, since X-Goog-Hash is a header: those of a HashedSource, else the
// final chunk's bytes are hashed from the source (re-read from a file, from
// memory for a stream).
func (u *upload) prepareFinal(c chunk) error {
	if at, ok := u.src.(*atSource); ok {
		if h, ok := at.hashes(u.d.md5 != nil); ok {
			u.final = &h
			return nil
		}
	}
	d := u.d.clone()
	if err := u.src.copyRange(d, c.off, c.off+c.n); err != nil {
		return err
	}
	h := d.sums()
	u.final = &h
	return nil
}

// queryStatus asks the server for its offset ("Content-Range: bytes */*").
// The total is never given: a status query with a total equal to the
// persisted bytes would finalise the object without our X-Goog-Hash.
func (u *upload) queryStatus(ctx context.Context) (*storage.Object, error) {
	req, err := http.NewRequest(http.MethodPut, u.s.URI, http.NoBody)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Range", "bytes */*")
	u.s.Key.set(req.Header)
	var r reply
	err = u.c.send(ctx, "status", req, nil, func(resp *http.Response, _ *watchdog) (err error) {
		r, err = u.readReply(resp)
		return err
	})
	if err != nil {
		return nil, err
	}
	if r.obj != nil { // the upload had completed: its answer was lost
		u.emit(Event{Kind: EventStatus, Status: r.status, Persisted: int64(r.obj.Size), Size: int64(r.obj.Size)})
		return r.obj, nil
	}
	if err := u.ack(r.persisted, nil); err != nil {
		return nil, err
	}
	u.emit(Event{Kind: EventStatus, Status: r.status, Range: r.rng, Persisted: r.persisted, Size: u.s.Size})
	u.emit(Event{Kind: EventResumed, Offset: r.persisted, Persisted: r.persisted, Size: u.s.Size})
	return nil, nil
}

// Cancel deletes the session (DELETE on its URI); its persisted bytes are
// discarded and no object is created. GCS answers 499 on success. A session
// that is already gone (404, 410) counts as cancelled, so a retried DELETE
// whose first answer was lost succeeds.
func (c *Client) Cancel(ctx context.Context, s *Session) error {
	if err := CheckOrigin(s.URI, c.endpoint); err != nil {
		return &Error{Op: "cancel", Object: s.name(), Offset: s.Persisted, Err: fmt.Errorf("refusing the saved session: %w", err)}
	}
	emit := c.emitter(s.Bucket, s.Object)
	err := c.runner(emit).Do(ctx, func(ctx context.Context) error {
		req, err := http.NewRequest(http.MethodDelete, s.URI, http.NoBody)
		if err != nil {
			return err
		}
		return c.send(ctx, "cancel", req, nil, func(resp *http.Response, _ *watchdog) error {
			switch code := resp.StatusCode; {
			case code == 499 || code/100 == 2 || code == http.StatusNotFound || code == http.StatusGone:
				return nil
			}
			return statusError(resp, secrets(s.URI), true)
		})
	})
	if err != nil {
		return &Error{Op: "cancel", Object: s.name(), Offset: s.Persisted, Err: err}
	}
	emit(Event{Kind: EventCanceled, Persisted: s.Persisted})
	return nil
}
