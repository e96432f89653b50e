package resumable

import (
	"github.com/gcsput/gcsput/retry"

	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// DownloadSpec names the object to download.
type DownloadSpec struct {
	Bucket string // required
	Object string // required

	// Generation pins the download to one generation of the object. 0
	// pins it to the generation of the first response, so a download
	// resumed after a break never splices bytes of a newer object onto an
	// older one: if the object is replaced meanwhile, it fails with a 404.
	Generation int64

	// Offset is the number of leading bytes the destination already holds
	// from an earlier, interrupted download of the same Generation (which
	// must then be set). The download continues with "Range: bytes=Offset-".
	// With [Client.DownloadAt], a destination that is also an io.ReaderAt
	// (an *os.File) is read back to include those bytes in the CRC32C
	// check; otherwise the check is skipped (Result.Verified false).
	Offset int64

	// Decompress asks GCS to decompress gzip-encoded objects (objects
	// stored with Content-Encoding: gzip) while serving them: decompressive
	// transcoding. The server's checksums then describe the stored,
	// compressed bytes and Range requests are ignored, so a transcoded
	// download is not verified and cannot resume: after a break it
	// restarts from zero with DownloadAt and fails with Download. By
	// default (false) gzip objects arrive as stored, compressed, verified
	// and resumable; decompress them with compress/gzip.
	Decompress bool

	// Start and End, with End > 0, download only the object's bytes
	// [Start, End): a slice, of which a sliced download runs several at
	// once into one file ([Client.DownloadAt] writes each byte at its
	// object offset). Offset, when set, is then in [Start, End]: the
	// slice's bytes before it are already written, and are read back. A
	// slice needs Generation, is never transcoded (Decompress is refused),
	// and is not verified on its own: DownloadResult.Local holds its
	// checksum, which [CombineCRC32C] joins with the other slices' to
	// check the whole object against DownloadResult.Hashes.
	Start, End int64

	// Split, if set, is called once, when the first response of a fresh
	// download (no Offset, Start or End) gives the object's size,
	// generation and stored Content-Encoding and is not transcoded, before
	// any byte is written. If it returns an end in (0, size), this download
	// becomes the slice [0, end), and the caller fetches the rest as other
	// slices pinned to that generation: a sliced download that costs no
	// request before its first byte (none to learn the size).
	Split func(size, generation int64, encoding string) (end int64)

	// Key is the customer-supplied encryption key the object was written
	// with, sent with every request of the download (each slice's, each
	// resumed range's); nil for an object without one.
	Key EncryptionKey
}

// DownloadResult describes a finished download.
type DownloadResult struct {
	Generation      int64  // the generation downloaded
	Size            int64  // the object offset reached: bytes in the destination, or a slice's End
	Hashes          Hashes // the server's checksums of the stored object
	Local           Hashes // the CRC32C of the bytes written from Start (or 0), Offset's read back; empty when they could not be read back
	Verified        bool   // the CRC32C of the bytes written matched Hashes
	ContentEncoding string // the object's stored Content-Encoding ("gzip", or "")
	Transcoded      bool   // the server decompressed the object (Decompress)
	Resumes         int    // requests that continued after a break
}

// Download writes the object's bytes to w in order and returns what was
// downloaded. A broken response is resumed with a Range request from the
// bytes already written; retries follow Options.Retry, with the budget
// restarting whenever bytes arrive. The CRC32C of every byte written is
// compared with the server's x-goog-hash at the end: a mismatch is a
// *ChecksumError (ErrChecksumMismatch), and w then holds corrupt data.
// Empty objects write nothing and verify.
func (c *Client) Download(ctx context.Context, spec DownloadSpec, w io.Writer) (*DownloadResult, error) {
	return c.download(ctx, spec, &seqSink{w: w})
}

// DownloadAt is [Client.Download] writing each byte at its offset in the
// object (w.WriteAt), as into a file. It never depends on a file position,
// and it can continue a partial download (spec.Offset).
func (c *Client) DownloadAt(ctx context.Context, spec DownloadSpec, w io.WriterAt) (*DownloadResult, error) {
	return c.download(ctx, spec, &atSink{w: w})
}

// sink is a download destination.
type sink interface {
	write(p []byte, off int64) error
	restartable() bool // can be rewritten from offset 0
}

type seqSink struct{ w io.Writer }

func (s *seqSink) write(p []byte, _ int64) error {
	_, err := s.w.Write(p)
	return err
}
func (s *seqSink) restartable() bool { return false }

type atSink struct{ w io.WriterAt }

func (s *atSink) write(p []byte, off int64) error {
	_, err := s.w.WriteAt(p, off)
	return err
}
func (s *atSink) restartable() bool { return true }

// download is the state of one download.
type download struct {
	c        *Client
	spec     DownloadSpec
	dst      sink
	d        *digest // of the bytes written, d.off of them
	size     int64   // -1 until a response says
	res      DownloadResult
	hashed   bool // d covers every byte written (false after Offset without read-back)
	started  bool
	reported int64 // bytes written at the last EventProgress
	split    bool  // Split was called
	// Response body bytes read, and at the last EventProgress.
	received, receivedReported int64
	emit                       func(Event)
}

func (c *Client) download(ctx context.Context, spec DownloadSpec, dst sink) (*DownloadResult, error) {
	ctx = retry.WithIdempotencyToken(ctx) // one download, one token, whatever the ranged GETs
	name := "gs://" + spec.Bucket + "/" + spec.Object
	if spec.Bucket == "" || spec.Object == "" {
		return nil, &Error{Op: "download", Object: name, Err: errors.New("bucket and object name are required")}
	}
	d := &download{c: c, spec: spec, dst: dst, d: newDigest(false), size: -1, hashed: true,
		emit: c.emitter(spec.Bucket, spec.Object)}
	d.res.Generation = spec.Generation
	d.d.off = spec.Start // the digest covers the bytes from Start
	if err := spec.check(); err != nil {
		return nil, &Error{Op: "download", Object: name, Err: err}
	}
	if err := d.readBack(); err != nil {
		return nil, &Error{Op: "download", Object: name, Err: err}
	}
	if err := d.run(ctx); err != nil {
		return nil, &Error{Op: "download", Object: name, Offset: d.d.off, Err: err}
	}
	d.res.Size = d.d.off
	d.emit(Event{Kind: EventFinished, Size: d.d.off, Persisted: d.d.off, Generation: d.res.Generation,
		CRC32C: EncodeCRC32C(d.res.Hashes.CRC32C)})
	return &d.res, nil
}

// check refuses a spec whose offsets make no sense.
func (spec *DownloadSpec) check() error {
	if err := spec.Key.check(); err != nil {
		return err
	}
	switch {
	case spec.Offset < 0 || spec.Offset > 0 && spec.Generation == 0:
		return errors.New("resuming at an offset needs a non-negative Offset and the Generation")
	case spec.End == 0 && spec.Start == 0:
		return nil
	case spec.Start < 0 || spec.End <= spec.Start:
		return fmt.Errorf("a slice needs 0 <= Start < End (got %d, %d)", spec.Start, spec.End)
	case spec.Generation == 0 || spec.Decompress:
		return errors.New("a slice needs the Generation, and cannot be decompressed")
	case spec.Offset != 0 && (spec.Offset < spec.Start || spec.Offset > spec.End):
		return fmt.Errorf("a slice's Offset %d is outside [%d, %d]", spec.Offset, spec.Start, spec.End)
	}
	return nil
}

// readBack starts from spec.Offset: the digest is rebuilt from the bytes
// the destination holds from Start when it can be read.
func (d *download) readBack() error {
	from := d.spec.Start
	if d.spec.Offset <= from {
		return nil
	}
	var ra io.ReaderAt
	if at, ok := d.dst.(*atSink); ok {
		ra, _ = at.w.(io.ReaderAt)
	}
	if ra == nil {
		d.hashed = false
		d.d.off = d.spec.Offset
		return nil
	}
	n, err := io.Copy(d.d, io.NewSectionReader(ra, from, d.spec.Offset-from))
	if err == nil && n < d.spec.Offset-from {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return &SourceError{Offset: from + n, Err: fmt.Errorf("reading back the partial download: %w", err)}
	}
	return nil
}

// end is the object offset the download ends at: a slice's End, else the
// object's size (-1 while unknown).
func (d *download) end() int64 {
	if d.spec.End > 0 {
		return d.spec.End
	}
	return d.size
}

// run is the download loop: fetch from the bytes written until the object
// is complete, every failure through the retry budget.
func (d *download) run(ctx context.Context) error {
	att := d.c.runner(d.emit).Begin()
	if d.spec.End > 0 && d.d.off == d.spec.End {
		return d.verify() // a slice already written whole
	}
	for {
		if err := att.Wait(ctx); err != nil {
			return err
		}
		before := d.d.off
		done, err := d.fetch(ctx)
		if err == nil && done {
			return d.verify()
		}
		if d.d.off > before {
			att.Reset()
		}
		if err == nil {
			err = io.ErrUnexpectedEOF // the body ended early without an error
		}
		if fatal(err) {
			return err
		}
		if err = att.Retry(ctx, err); err != nil {
			return err
		}
		d.res.Resumes++
		d.emit(Event{Kind: EventResumed, Offset: d.d.off, Persisted: d.d.off, Size: d.size})
	}
}

// verify compares the CRC32C of the bytes written with the server's.
func (d *download) verify() error {
	h := d.res.Hashes
	if d.res.Transcoded || !d.hashed {
		return nil // nothing to compare with (documented in DownloadSpec)
	}
	local := d.d.sums()
	d.res.Local = local
	if !h.HasCRC32C || d.spec.End > 0 {
		return nil // no checksum from the server, or a slice: its caller combines
	}
	if local.CRC32C != h.CRC32C {
		return &ChecksumError{Object: "gs://" + d.spec.Bucket + "/" + d.spec.Object,
			Local: local, Remote: Hashes{CRC32C: h.CRC32C, HasCRC32C: true}}
	}
	d.res.Verified = true
	return nil
}

// request builds the GET for the bytes from d.d.off on.
func (d *download) request() (*http.Request, error) {
	q := url.Values{"alt": {"media"}}
	if d.res.Generation != 0 {
		q.Set("generation", strconv.FormatInt(d.res.Generation, 10))
	}
	u := d.c.endpoint + "/download/storage/v1/b/" + url.PathEscape(d.spec.Bucket) + "/o/" +
		url.PathEscape(d.spec.Object) + "?" + q.Encode()
	req, err := http.NewRequest(http.MethodGet, u, http.NoBody)
	if err != nil {
		return nil, err
	}
	// Asking for gzip ourselves gets the stored bytes of a gzip object
	// (which the checksums describe) and stops net/http from silently
	// decompressing; "identity" asks GCS to transcode.
	d.spec.Key.set(req.Header)
	req.Header.Set("Accept-Encoding", "gzip")
	if d.spec.Decompress {
		req.Header.Set("Accept-Encoding", "identity")
	}
	switch {
	case d.spec.End > 0:
		req.Header.Set("Range", "bytes="+strconv.FormatInt(d.d.off, 10)+"-"+strconv.FormatInt(d.spec.End-1, 10))
	case d.d.off > 0 && !d.res.Transcoded:
		req.Header.Set("Range", "bytes="+strconv.FormatInt(d.d.off, 10)+"-")
	}
	return req, nil
}

// isTranscoded reports a response the server decompressed on the fly.
func isTranscoded(resp *http.Response) bool {
	return strings.EqualFold(resp.Header.Get("X-Goog-Stored-Content-Encoding"), "gzip") &&
		!strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip")
}
