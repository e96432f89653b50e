package resumable

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/gcsput/gcsput/retry"

	storage "google.golang.org/api/storage/v1"
)

// Upload sends the object's bytes from r, which holds the whole object
// (s.Size bytes, from offset 0), and returns the object GCS created. Nothing
// is buffered: each chunk is read from r when it is sent, and re-read at the
// server's offset when the server kept less than was sent.
//
// The session may come from [Client.Start] or from [ParseSession] in a later
// process; bytes the server already has are not sent again. Every request is
// retried per Options.Retry, and after any failure the upload asks the
// server for its offset and continues from there.
//
// On return s holds the last persisted offset and hash state, so a failed
// upload can be resumed later with the same session. Errors are *Error;
// see the sentinels for the cases a caller must handle.
func (c *Client) Upload(ctx context.Context, s *Session, r io.ReaderAt) (*storage.Object, error) {
	if s.Size < 0 {
		return nil, &Error{Op: "upload", Object: s.name(), Err: errors.New("the size must be known to upload from an io.ReaderAt")}
	}
	return c.upload(ctx, s, &atSource{r: r, size: s.Size, chunkSize: int64(s.ChunkSize)})
}

// UploadStream is [Client.Upload] for a plain reader (a pipe, stdin) whose
// size may be unknown (s.Size -1). r yields the whole object from offset 0:
// when a saved session is resumed, the bytes the server already has are read
// from r and skipped. One chunk of memory (s.ChunkSize bytes, at most
// [MaxStreamChunkSize]) holds the bytes the server has not yet acknowledged;
// it grows as the stream delivers bytes, so it is never larger than twice
// what was read.
func (c *Client) UploadStream(ctx context.Context, s *Session, r io.Reader) (*storage.Object, error) {
	if s.ChunkSize > MaxStreamChunkSize {
		return nil, &Error{Op: "upload", Object: s.name(), Err: fmt.Errorf("chunk size %d is too large for a stream, whose chunk is held in memory: the limit is %d (1 GiB)", s.ChunkSize, MaxStreamChunkSize)}
	}
	return c.upload(ctx, s, newStreamSource(r, s.Size, s.ChunkSize))
}

// upload is one run of the upload loop over src.
type upload struct {
	c     *Client
	s     *Session
	src   source
	d     *digest // digest of the first d.off bytes, d.off <= s.Persisted
	final *Hashes // full-object hashes, once the final chunk was prepared
	emit  func(Event)

	lastChunk int64 // the last chunk's length and its 308's Range, for the no-progress error
	lastRange string
	// unacked is the bytes the last step sent without an answer (a chunk
	// cut off), for the final error; the server's offset is still Persisted.
	unacked int64
}

func (c *Client) upload(ctx context.Context, s *Session, src source) (*storage.Object, error) {
	if err := s.check(); err != nil {
		return nil, &Error{Op: "upload", Object: s.name(), Err: err}
	}
	if err := s.checkKey(); err != nil {
		return nil, &Error{Op: "upload", Object: s.name(), Offset: s.Persisted, Err: err}
	}
	if err := CheckOrigin(s.URI, c.endpoint); err != nil {
		return nil, &Error{Op: "upload", Object: s.name(), Offset: s.Persisted, Err: fmt.Errorf("refusing the saved session: %w", err)}
	}
	u := &upload{c: c, s: s, src: src, d: restoreDigest(s, c.opts.MD5), emit: c.emitter(s.Bucket, s.Object)}
	// One upload is one operation: every chunk and status query of this run carries
	// the same idempotency token, as gensupport's resumable upload does.
	obj, err := u.run(retry.WithIdempotencyToken(ctx))
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			err = &Error{Op: "upload", Object: s.name(), Offset: s.Persisted, Sent: u.unacked, Err: err}
		}
		return nil, err
	}
	u.emit(Event{Kind: EventFinished, Size: int64(obj.Size), Generation: obj.Generation, CRC32C: obj.Crc32c, Persisted: s.Persisted})
	return obj, nil
}

// run is the loop: one request per step, every failure through the retry
// budget, which restarts whenever the server's offset advances. A failed
// step is followed by a status query, because only the server knows what
// it kept of an interrupted request.
func (u *upload) run(ctx context.Context) (*storage.Object, error) {
	att := u.c.runner(u.emit).Begin()
	query := !u.s.fresh // a saved session: the server may have more than we recorded
	u.s.fresh = false
	refused := 0 // chunks answered 401 since the last progress
	for {
		if err := att.Wait(ctx); err != nil {
			return nil, err
		}
		before, sent := u.s.Persisted, !query
		u.unacked = 0
		var obj *storage.Object
		var err error
		if query {
			obj, err = u.queryStatus(ctx)
		} else {
			obj, err = u.sendChunk(ctx)
		}
		if err == nil && obj != nil {
			return obj, u.verify(obj)
		}
		switch {
		case err == nil && u.s.Persisted > before:
			att.Reset()
			query, refused = false, 0
			continue
		case err == nil && !sent:
			// A status query: it follows a failure that was already counted, or opens a
			// saved session. The chunk after it is what must make progress.
			query = false
			continue
		case err == nil:
			// A 308 that kept none of the chunk. It costs an attempt and a wait like any
			// failure, or a server that never progresses would be asked again at once, forever.
			err = fmt.Errorf("%w: a %d-byte chunk at offset %d was answered with 308 and Range %q", retry.ErrNoProgress, u.lastChunk, before, u.lastRange)
		}
		if fatal(err) {
			return nil, err
		}
		if sent && u.refusedChunk(err, &refused) {
			query = true
			continue
		}
		// After a failure only the server knows what it kept; a 308 without progress
		// has just said it, so the chunk is sent again without asking.
		query = !errors.Is(err, retry.ErrNoProgress)
		if err = att.Retry(ctx, err); err != nil {
			return nil, err
		}
	}
}

// MaxAuthRetries is how many chunks in a row, without progress, an upload
// sends again after the server refused their credentials (401), each after
// a status query that carries a fresh token (google-auth's
// max_refresh_attempts). A 401 to any other request of the session is final:
// its body can be sent again, so the transport has already retried it with
// fresh tokens (package auth: MaxRefreshes).
const MaxAuthRetries = 2

// refusedChunk reports whether a chunk's err is a 401 worth a status query
// and the chunk again, counting it in *refused. The transport (package auth)
// has dropped the token but could not send the chunk again, its body being
// read from the source as it goes: the status query carries a fresh token.
// No wait: a new token is the cure, not time.
func (u *upload) refusedChunk(err error, refused *int) bool {
	if !isUnauthorized(err) || *refused >= MaxAuthRetries {
		return false
	}
	*refused++
	u.emit(Event{Kind: EventRetry, Attempt: *refused, Err: err})
	return true
}

// isUnauthorized reports a 401: credentials missing, expired or revoked.
func isUnauthorized(err error) bool { return errors.Is(err, ErrUnauthorized) }

// fatal reports errors that retrying cannot fix, which end a transfer at
// once whatever the retry classification says.
func fatal(err error) bool {
	var se *SourceError
	return errors.As(err, &se) || errors.Is(err, ErrSessionExpired) ||
		errors.Is(err, ErrChecksumMismatch) || errors.Is(err, ErrPreconditionFailed) ||
		errors.Is(err, errProtocol)
}

// errProtocol marks an answer that breaks the protocol's rules (an offset
// going backwards, a malformed header): retrying would repeat it.
var errProtocol = errors.New("resumable: protocol violation")

// ack records that the server has the first p bytes: the digest catches up
// to p (re-reading from the source what the tentative digest did not cover
// exactly) and the session is updated, before any event reports it.
func (u *upload) ack(p int64, tentative *digest) error {
	switch {
	case p < u.d.off:
		return fmt.Errorf("%w: server offset %d is before %d, which it acknowledged earlier", errProtocol, p, u.d.off)
	case u.s.Size >= 0 && p > u.s.Size:
		return fmt.Errorf("%w: server offset %d is past the object size %d", errProtocol, p, u.s.Size)
	case tentative != nil && tentative.off == p:
		u.d = tentative // the usual case: the server kept exactly what was hashed while sending
	case p > u.d.off:
		if err := u.src.copyRange(u.d, u.d.off, p); err != nil {
			return err
		}
	}
	u.s.Persisted = p
	return u.d.save(u.s)
}

// verify compares the finished object's CRC32C with the data's. When the
// upload finished without this run preparing the final chunk (a status query
// found the object complete), the source is read to the end to compute it.
func (u *upload) verify(obj *storage.Object) error {
	if u.final == nil {
		d := u.d.clone()
		if err := u.src.copyRange(d, d.off, int64(obj.Size)); err != nil {
			return err
		}
		h := d.sums()
		u.final = &h
	}
	if u.s.Size >= 0 && int64(obj.Size) != u.s.Size {
		return fmt.Errorf("%w: the object has %d bytes, not %d", errProtocol, obj.Size, u.s.Size)
	}
	u.s.Persisted = int64(obj.Size)
	if obj.Crc32c == "" {
		return nil // GCS always sends it; the server already checked X-Goog-Hash
	}
	remote, err := DecodeCRC32C(obj.Crc32c)
	if err != nil || remote != u.final.CRC32C {
		return &ChecksumError{Object: u.s.name(), Local: *u.final, Remote: Hashes{CRC32C: remote, HasCRC32C: err == nil}}
	}
	return nil
}
