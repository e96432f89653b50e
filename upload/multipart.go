package upload

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/api/googleapi"
	raw "google.golang.org/api/storage/v1"

	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/retry"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// multipart uploads a small file in one request (uploadType=multipart): the
// metadata part carries the file's CRC32C, so the server refuses the object
// if the bytes it received differ. The request is retried under the policy.
//
// Retrying an insert is safe here: sending the same bytes again at worst
// makes a second, identical generation. With IfAbsent (ifGenerationMatch=0) a
// retry can meet the object its own earlier attempt created (the response was
// lost): a 412 after a failed attempt is therefore checked against the
// object's size and CRC32C before being called "exists".
func (c *Client) multipart(ctx context.Context, r *Result, f *os.File, fp Fingerprint, dst URL, a Attrs, o UploadOptions) error {
	ifAbsent := o.IfAbsent
	size := fp.Size
	// A file of up to inlineMax bytes is read once: checksummed and sent
	// from memory as one body, which net/http writes with its headers in a
	// single system call. A larger one is read twice, to checksum and to
	// send, and never held whole.
	var whole []byte
	var crc uint32
	var err error
	var pooled *[]byte // whole's buffer, when it came from inlineBufs
	if size <= inlineMax {
		pooled = getInline(size)
		whole, crc, err = readInline(f, size, pooled)
	} else {
		crc, err = fileCRC32C(f, size)
	}
	if ch := changedSince(f.Name(), fp); err != nil || ch != "" {
		// A file that changes while it is read may read torn: never send it.
		putInline(pooled)
		if ch != "" {
			return fmt.Errorf("upload: %s changed while being uploaded (%s); nothing was written to %s: upload it again", f.Name(), ch, dst)
		}
		return err
	}
	head, tail, boundary, err := multipartFrame(dst, a, crc)
	if err != nil {
		putInline(pooled)
		return err
	}
	if whole != nil {
		whole = frameInline(whole, head, tail)
		if pooled != nil && cap(whole) != cap(*pooled) {
			putInline(pooled) // the frame did not fit: whole is a new slice
			pooled = nil
		}
	}
	// fields asks for the three members checkObject reads instead of the
	// whole Object resource (a partial response): 64 bytes instead of
	// about 670, and decoding the full resource was a tenth of a small
	// upload's CPU.
	u := c.endpoint + "/upload/storage/v1/b/" + url.PathEscape(dst.Bucket) + "/o?uploadType=multipart&fields=generation,size,crc32c"
	switch {
	case ifAbsent:
		u += "&ifGenerationMatch=0"
	case o.IfGenerationMatch != 0:
		u += "&ifGenerationMatch=" + strconv.FormatInt(o.IfGenerationMatch, 10)
	}
	emit := c.emitter(dst)
	c.progress(r, 0, size) // in flight: a progress display can name it
	var obj objectReply
	var sent atomic.Int64
	var writes, failedWrites atomic.Int32
	attempts := 0
	err = c.runnerFor(emit, r).Do(ctx, func(ctx context.Context) error {
		attempts++
		n := int64(len(head)+len(tail)) + size
		if whole != nil {
			// A *bytes.Reader is what lets net/http buffer headers and
			// body together; bytes count once the request is written.
			ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(w httptrace.WroteRequestInfo) {
				if w.Err == nil {
					sent.Add(size)
				} else {
					failedWrites.Add(1)
				}
				writes.Add(1)
			}})
			return c.postMultipart(ctx, u, boundary, bytes.NewReader(whole), n, &obj)
		}
		data := &countingBody{ReadCloser: io.NopCloser(io.NewSectionReader(f, 0, size)), n: &sent}
		// struct{io.Reader} hides MultiReader's WriteTo, which allocates a
		// 32 KiB buffer per request; the transport's buffered writer reads
		// into its own buffer instead.
		body := struct{ io.Reader }{io.MultiReader(strings.NewReader(head), data, strings.NewReader(tail))}
		return c.postMultipart(ctx, u, boundary, body, n, &obj)
	})
	r.Transferred += sent.Load()
	// The buffer goes back to the pool only when nothing can read it any
	// more: one attempt, which succeeded, and whose write net/http reported
	// finished (WroteRequest runs on the transport's writing goroutine after
	// the body's last read; the atomics order it before this). A failed
	// attempt's body may still be read after Do returns, so then the
	// buffer is left to the garbage collector.
	if pooled != nil && err == nil && attempts == 1 && writes.Load() == 1 && failedWrites.Load() == 0 {
		putInline(pooled)
	}
	if (ifAbsent || o.IfGenerationMatch != 0) && isStatus(err, http.StatusPreconditionFailed) {
		return c.afterPrecondition(ctx, r, dst, size, crc, attempts, o, err)
	}
	if err != nil {
		return fmt.Errorf("upload: %s: %w", dst, err)
	}
	if err := checkObject(&obj, size, crc); err != nil {
		return fmt.Errorf("upload: %s: %w", dst, err)
	}
	done(r, &raw.Object{Generation: obj.Generation, Size: obj.Size, Crc32c: obj.Crc32c}, r.statusAfter(false))
	emit(resumable.Event{Kind: resumable.EventFinished, Size: size, Generation: obj.Generation, CRC32C: obj.Crc32c, Persisted: size})
	c.progress(r, size, size)
	return nil
}

// afterPrecondition decides what a 412 (cause) under IfAbsent or
// IfGenerationMatch means. After a failed attempt, an object with our size
// and CRC32C is our own earlier attempt's, whose reply was lost: uploaded.
// Otherwise IfAbsent met an existing object ("skipped: exists"), and
// IfGenerationMatch a generation other than the one named (an error).
func (c *Client) afterPrecondition(ctx context.Context, r *Result, dst URL, size int64, crc uint32, attempts int, o UploadOptions, cause error) error {
	attrs, err := c.Stat(ctx, dst)
	own := err == nil && attempts > 1 && attrs.Size == size && attrs.CRC32C == crc
	switch {
	case !own && !o.IfAbsent:
		return fmt.Errorf("upload: %s: not replaced: its generation is not %d: %w", dst, o.IfGenerationMatch, cause)
	case err != nil:
		return fmt.Errorf("upload: %s: precondition failed, then: %w", dst, err)
	}
	r.Generation, r.CRC32C, r.Size = attrs.Generation, attrs.CRC32C, attrs.Size
	if own {
		r.Status = r.statusAfter(false)
		return nil
	}
	r.Status, r.Note = StatusSkipped, "exists"
	return nil
}

// insertMetadata is the metadata part of a multipart insert: the writable
// fields of the JSON API's Object resource that gcsput sets. A plain struct,
// since raw.Object's MarshalJSON builds a map per call.
type insertMetadata struct {
	Name               string            `json:"name"`
	ContentType        string            `json:"contentType,omitempty"`
	CacheControl       string            `json:"cacheControl,omitempty"`
	ContentDisposition string            `json:"contentDisposition,omitempty"`
	ContentEncoding    string            `json:"contentEncoding,omitempty"`
	ContentLanguage    string            `json:"contentLanguage,omitempty"`
	Metadata           map[string]string `json:"metadata,omitempty"`
	StorageClass       string            `json:"storageClass,omitempty"`
	KmsKeyName         string            `json:"kmsKeyName,omitempty"`
	Crc32c             string            `json:"crc32c,omitempty"`
}

// objectReply is what an upload needs of the Object resource the server
// returns. Decoding only these fields costs a fraction of a raw.Object.
type objectReply struct {
	Generation int64  `json:"generation,string"`
	Size       uint64 `json:"size,string"`
	Crc32c     string `json:"crc32c"`
}

// inlineMax is the largest file multipart holds in memory: one copy per
// upload in flight, so Parallelism × 256 KiB at most.
const inlineMax = 256 << 10

// inlinePooledMax is the largest file whose bytes are read into a pooled
// buffer (most small files); larger ones up to inlineMax get their own.
const inlinePooledMax = 60 << 10

// inlineBufs holds 64 KiB buffers for small files, rather than one
// allocated, zeroed and collected per file (gcsbench small-p32: client CPU
// 0.16 -> 0.14 s, 14.7k -> 16.2-17.1k files/s, with the non-blocking open).
// At most one per upload in flight is out of the pool.
var inlineBufs = sync.Pool{New: func() any { b := make([]byte, 0, inlinePooledMax+4<<10); return &b }}

// getInline returns a pooled buffer for a file of size bytes and its frame,
// or nil when the file is too large for one.
func getInline(size int64) *[]byte {
	if size > inlinePooledMax {
		return nil
	}
	return inlineBufs.Get().(*[]byte)
}

// inlinePuts counts buffers given back, for the tests.
var inlinePuts atomic.Int64

func putInline(b *[]byte) {
	if b != nil {
		inlinePuts.Add(1)
		inlineBufs.Put(b)
	}
}

// readInline reads a small file whole and checksums it, into buf when it is
// not nil. The slice has room for the multipart frame around the data (see
// frameInline), so a file costs one allocation or none.
func readInline(f io.ReaderAt, size int64, buf *[]byte) ([]byte, uint32, error) {
	var b []byte
	if buf != nil {
		b = (*buf)[:size]
	} else {
		b = make([]byte, size, size+4<<10)
	}
	if n, err := f.ReadAt(b, 0); n < len(b) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF // the file shrank since it was opened
		}
		return nil, 0, fmt.Errorf("upload: reading to checksum: %w", err)
	}
	return b, crc32.Checksum(b, castagnoli), nil
}

// frameInline turns data (from readInline) into the whole multipart body.
func frameInline(data []byte, head, tail string) []byte {
	n := len(head) + len(data) + len(tail)
	if n > cap(data) {
		return append(append(append(make([]byte, 0, n), head...), data...), tail...)
	}
	b := data[:n]
	copy(b[len(head):], data) // copy moves overlapping bytes correctly
	copy(b, head)
	copy(b[len(head)+len(data):], tail)
	return b
}

// multipartFrame builds the parts before and after the file's bytes.
func multipartFrame(dst URL, a Attrs, crc uint32) (head, tail, boundary string, err error) {
	meta, err := json.Marshal(&insertMetadata{
		Name: dst.Object, ContentType: a.ContentType, CacheControl: a.CacheControl,
		ContentDisposition: a.ContentDisposition, ContentEncoding: a.ContentEncoding,
		ContentLanguage: a.ContentLanguage, Metadata: nonEmpty(a.Metadata), StorageClass: a.StorageClass,
		KmsKeyName: a.KMSKeyName, Crc32c: EncodeCRC32C(crc),
	})
	if err != nil {
		return "", "", "", err
	}
	var b [16]byte
	rand.Read(b[:])
	boundary = "gcsput-" + hex.EncodeToString(b[:])
	head = "--" + boundary + "\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n" + string(meta) +
		"\r\n--" + boundary + "\r\nContent-Type: " + a.ContentType + "\r\n\r\n"
	tail = "\r\n--" + boundary + "--\r\n"
	return head, tail, boundary, nil
}

// postMultipart sends one attempt. Its time is bounded (a small file must not
// hang a worker forever): StallTimeout plus a second per 64 KiB.
func (c *Client) postMultipart(ctx context.Context, u, boundary string, body io.Reader, n int64, obj *objectReply) error {
	limit := c.stall() + time.Duration(n>>16)*time.Second
	actx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, u, body)
	if err != nil {
		return retry.Permanent(err)
	}
	req.ContentLength = n
	req.Header.Set("Content-Type", "multipart/related; boundary="+boundary)
	req.Header.Set("User-Agent", "gcsput")
	resp, err := c.http.Do(req)
	if err == nil {
		defer resp.Body.Close()
		if err = googleapi.CheckResponse(resp); err == nil {
			err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(obj)
		}
	}
	if err != nil && actx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		return &resumable.StallError{Op: "multipart", Idle: limit} // retryable, unlike the context's own error
	}
	return err
}

// stall is the effective stall timeout.
func (c *Client) stall() time.Duration {
	if c.opts.StallTimeout > 0 {
		return c.opts.StallTimeout
	}
	return resumable.DefaultStallTimeout
}

// checkObject compares the server's object with what was sent.
func checkObject(obj *objectReply, size int64, crc uint32) error {
	if int64(obj.Size) != size {
		return fmt.Errorf("%w: the object has %d bytes, %d were sent", resumable.ErrChecksumMismatch, obj.Size, size)
	}
	remote, err := decodeCRC32C(obj.Crc32c)
	if err != nil || remote != crc {
		return fmt.Errorf("%w: object CRC32C %q, sent %s", resumable.ErrChecksumMismatch, obj.Crc32c, EncodeCRC32C(crc))
	}
	return nil
}

// fileCRC32C checksums the first size bytes of f, read through (not
// buffered whole).
func fileCRC32C(f io.ReaderAt, size int64) (uint32, error) {
	bp := crcBufs.Get().(*[]byte)
	defer crcBufs.Put(bp)
	h := crc32.New(castagnoli)
	if _, err := io.CopyBuffer(h, io.NewSectionReader(f, 0, size), *bp); err != nil {
		return 0, fmt.Errorf("upload: reading to checksum: %w", err)
	}
	return h.Sum32(), nil
}

// crcBufs are the read buffers of fileCRC32C: one per concurrent checksum,
// reused, rather than one allocated per file.
var crcBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// decodeCRC32C parses GCS's base64 form.
func decodeCRC32C(s string) (uint32, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != 4 {
		return 0, fmt.Errorf("bad crc32c %q", s)
	}
	return binary.BigEndian.Uint32(b), nil
}
