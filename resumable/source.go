package resumable

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// A source yields an object's bytes chunk by chunk. Offsets given to it are
// the server's persisted offsets: chunk(off) is called again with the same or
// a smaller offset when the server kept less than was sent.
type source interface {
	// chunk returns the chunk that starts at off. Bytes before off are
	// persisted and may be dropped.
	chunk(off int64) (chunk, error)
	// copyRange writes bytes [from, to) to w: persisted bytes the digest has
	// not yet covered. from is at least the last offset given to chunk.
	copyRange(w io.Writer, from, to int64) error
	// checkSource is called before the final chunk at off is sent: an error
	// keeps the object from being finalized.
	checkSource(off int64) error
}

// A SourceChecker is a source given to [Client.Upload] that can tell
// whether it still holds the bytes the session started with (a file can
// compare its fingerprint). Upload calls CheckSource just before the request
// that would finalize the object; an error ends the upload with a
// *SourceError matching [ErrSourceChanged], and the object is not created,
// so a good object is never replaced by a mix of two versions.
type SourceChecker interface {
	CheckSource() error
}

// A HashedSource is a source given to [Client.Upload] that knows its
// full-object hashes: its caller hashed it anyway, or hashes it while the
// session starts. Before the final request Upload takes them as that
// request's X-Goog-Hash instead of reading the final chunk a second time to
// hash it (a request of 32 MiB waited for that). They must be of the
// source's s.Size bytes from offset 0. The server checks them against the
// object it assembles, so a source whose bytes are not its hashes' (a wrong
// hash, or a file changed since) ends in [ErrChecksumMismatch], never in a
// wrong object. An error, or hashes without a CRC32C or without the MD5 that
// Options.MD5 asks for, makes Upload hash the bytes itself.
type HashedSource interface {
	Hashes() (Hashes, error)
}

// chunk describes one request's payload.
type chunk struct {
	off, n int64
	final  bool             // off+n is the object's size
	open   func() io.Reader // a fresh reader of the n bytes, one per attempt
}

// contentRange is the chunk's Content-Range request header.
func (c chunk) contentRange() contentRange {
	total := int64(-1)
	if c.final {
		total = c.off + c.n
	}
	if c.n == 0 {
		return contentRange{First: -1, Last: -1, Total: total}
	}
	return contentRange{First: c.off, Last: c.off + c.n - 1, Total: total}
}

// SourceError reports that reading the data to upload failed, or that the
// source does not match the session (it ended early, or ran past the
// declared size). Retrying cannot fix it. A stream that runs past its
// declared size is not detected: bytes after Size are never read.
type SourceError struct {
	Offset int64 // where in the object the problem was found
	Err    error
}

func (e *SourceError) Error() string {
	return fmt.Sprintf("resumable: reading source at offset %d: %v", e.Offset, e.Err)
}

func (e *SourceError) Unwrap() error { return e.Err }

// atSource reads a random-access source (a file). It buffers nothing: each
// attempt reads the chunk afresh at the offset the server asks for.
type atSource struct {
	r         io.ReaderAt
	size      int64
	chunkSize int64
}

func (s *atSource) checkSource(off int64) error     { return checkReader(s.r, off) }
func (s *streamSource) checkSource(off int64) error { return checkReader(s.r, off) }

// checkReader asks r, if it is a SourceChecker, whether it still holds the
// session's bytes.
func checkReader(r any, off int64) error {
	ck, ok := r.(SourceChecker)
	if !ok {
		return nil
	}
	if err := ck.CheckSource(); err != nil {
		return &SourceError{off, fmt.Errorf("%w: %v", ErrSourceChanged, err)}
	}
	return nil
}

func (s *atSource) chunk(off int64) (chunk, error) {
	if off < 0 || off > s.size {
		return chunk{}, &SourceError{off, fmt.Errorf("server offset outside the %d-byte source", s.size)}
	}
	n := min(s.chunkSize, s.size-off)
	open := func() io.Reader { return io.NewSectionReader(s.r, off, n) }
	return chunk{off: off, n: n, final: off+n == s.size, open: open}, nil
}

// hashes returns the full-object hashes r knows, if it is a HashedSource
// with the hashes md5 (Options.MD5) asks for.
func (s *atSource) hashes(md5 bool) (Hashes, bool) {
	hs, ok := s.r.(HashedSource)
	if !ok {
		return Hashes{}, false
	}
	h, err := hs.Hashes()
	if err != nil || !h.HasCRC32C || md5 && len(h.MD5) == 0 {
		return Hashes{}, false
	}
	return h, true
}

func (s *atSource) copyRange(w io.Writer, from, to int64) error {
	if from < 0 || to > s.size {
		return &SourceError{from, fmt.Errorf("range %d-%d outside the %d-byte source", from, to, s.size)}
	}
	n, err := io.Copy(w, io.NewSectionReader(s.r, from, to-from))
	if err == nil && n < to-from {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return &SourceError{from + n, err}
	}
	return nil
}

// streamSource reads a plain io.Reader through one buffer of chunkSize+1
// bytes. The buffer keeps every byte the server has not acknowledged, so a
// short 308 or a failed request is re-sent from memory. The extra byte is a
// look-ahead: a full chunk followed by EOF is sent as the final chunk instead
// of leaving an empty final request.
type streamSource struct {
	r         io.Reader
	size      int64  // declared size, or -1
	chunkSize int    // bytes per non-final chunk
	buf       []byte // bytes [bufOff, bufOff+len(buf)) of the object
	bufOff    int64
	eof       bool
}

func newStreamSource(r io.Reader, size int64, chunkSize int) *streamSource {
	return &streamSource{r: r, size: size, chunkSize: chunkSize, buf: make([]byte, 0, min(chunkSize+1, firstStreamBuf))}
}

// firstStreamBuf is the buffer a stream starts with. It doubles as bytes
// arrive, up to a chunk and one byte, so a short stream with a huge chunk
// size never allocates more than it sent.
const firstStreamBuf = 256 << 10

// MaxStreamChunkSize is the largest chunk size [Client.UploadStream]
// accepts: a stream's unacknowledged chunk is held in memory.
const MaxStreamChunkSize = 1 << 30

func (s *streamSource) end() int64 { return s.bufOff + int64(len(s.buf)) }

func (s *streamSource) chunk(off int64) (chunk, error) {
	if err := s.dropTo(off); err != nil {
		return chunk{}, err
	}
	if err := s.fill(); err != nil {
		return chunk{}, err
	}
	c := chunk{off: off, n: int64(len(s.buf))}
	switch {
	case s.size >= 0 && s.end() == s.size, s.eof:
		c.final = true
	default:
		c.n = int64(s.chunkSize)
	}
	data := s.buf[:c.n]
	c.open = func() io.Reader { return bytes.NewReader(data) }
	return c, nil
}

// dropTo forgets the bytes before off, reading and discarding source bytes
// when off is past the buffer (a resumed session skipping its persisted
// prefix).
func (s *streamSource) dropTo(off int64) error {
	if off < s.bufOff {
		return &SourceError{off, errors.New("server offset went back before bytes already acknowledged; a stream cannot rewind")}
	}
	if off <= s.end() {
		s.buf = s.buf[:copy(s.buf, s.buf[off-s.bufOff:])]
		s.bufOff = off
		return nil
	}
	s.bufOff, s.buf = s.end(), s.buf[:0]
	for s.bufOff < off {
		if err := s.fill(); err != nil {
			return err
		}
		if len(s.buf) == 0 {
			return &SourceError{s.bufOff, fmt.Errorf("stream ended before the %d bytes the server has", off)}
		}
		n := min(int64(len(s.buf)), off-s.bufOff)
		s.buf = s.buf[:copy(s.buf, s.buf[n:])]
		s.bufOff += n
	}
	return nil
}

// fill reads until the buffer is full, the stream ends, or the declared size
// is reached. Reading happens before any request is made, so a slow producer
// never counts as a stalled upload.
func (s *streamSource) fill() error {
	for !s.eof && len(s.buf) < s.chunkSize+1 && (s.size < 0 || s.end() < s.size) {
		if len(s.buf) == cap(s.buf) {
			s.buf = append(make([]byte, 0, min(2*cap(s.buf), s.chunkSize+1)), s.buf...)
		}
		n, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
		s.buf = s.buf[:len(s.buf)+n]
		if errors.Is(err, io.EOF) {
			s.eof = true
		} else if err != nil {
			return &SourceError{s.end(), err}
		}
	}
	if s.size >= 0 && s.eof && s.end() < s.size {
		return &SourceError{s.end(), fmt.Errorf("stream ended before its declared size %d", s.size)}
	}
	return nil
}

func (s *streamSource) copyRange(w io.Writer, from, to int64) error {
	if err := s.dropTo(from); err != nil {
		return err
	}
	for from < to {
		if from == s.end() {
			s.bufOff, s.buf = s.end(), s.buf[:0]
			if err := s.fill(); err != nil {
				return err
			}
			if len(s.buf) == 0 {
				return &SourceError{from, fmt.Errorf("stream ended before the %d bytes the server has", to)}
			}
		}
		n := min(to, s.end()) - from
		w.Write(s.buf[from-s.bufOff : from-s.bufOff+n])
		from += n
	}
	return nil
}
