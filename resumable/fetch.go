package resumable

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	storage "google.golang.org/api/storage/v1"
)

// fetch makes one GET for the bytes from d.d.off on and writes what
// arrives. done reports the object complete; a nil error with done false
// means the body ended early.
func (d *download) fetch(ctx context.Context) (done bool, err error) {
	req, err := d.request()
	if err != nil {
		return false, err
	}
	err = d.c.send(ctx, "download", req, nil, func(resp *http.Response, dog *watchdog) error {
		skip, complete, err := d.accept(resp)
		if err != nil || complete {
			done = complete
			return err
		}
		done, err = d.copyBody(resp.Body, skip, dog)
		return err
	})
	if err == nil && done && !d.res.Hashes.HasCRC32C && !d.res.Transcoded {
		err = d.stat(ctx) // a 416 at the end told us no hashes
	}
	return done, err
}

// accept checks a response before its body is read: status, generation,
// hashes and where the body starts. skip is how many leading body bytes are
// already written (a server that ignored Range); complete means there is
// nothing left to read (416 at the object's end).
func (d *download) accept(resp *http.Response) (skip int64, complete bool, err error) {
	switch resp.StatusCode {
	case http.StatusOK, http.StatusPartialContent:
	case http.StatusRequestedRangeNotSatisfiable:
		// Asked for bytes=N- with N the object's size: nothing is left.
		cr, err := parseContentRange(resp.Header.Get("Content-Range"))
		if err != nil || cr.Total != d.d.off {
			return 0, false, fmt.Errorf("%w: 416 for offset %d (Content-Range %q)", errProtocol, d.d.off, resp.Header.Get("Content-Range"))
		}
		d.size = cr.Total
		return 0, true, nil
	default:
		return 0, false, statusError(resp, nil, false)
	}
	if err := d.pin(resp); err != nil {
		return 0, false, err
	}
	defer d.start(resp.StatusCode)
	if resp.StatusCode == http.StatusOK {
		return d.whole(resp)
	}
	cr, err := parseContentRange(resp.Header.Get("Content-Range"))
	if err != nil || cr.First != d.d.off || cr.Total < 0 || d.spec.End > 0 && cr.Last != d.spec.End-1 {
		return 0, false, fmt.Errorf("%w: 206 for bytes %d-%s with Content-Range %q", errProtocol, d.d.off, d.rangeEnd(), resp.Header.Get("Content-Range"))
	}
	d.size = cr.Total
	return 0, false, nil
}

// rangeEnd is the last byte asked for, for messages.
func (d *download) rangeEnd() string {
	if d.spec.End > 0 {
		return strconv.FormatInt(d.spec.End-1, 10)
	}
	return ""
}

// whole handles a 200: the whole object, from byte 0.
func (d *download) whole(resp *http.Response) (skip int64, complete bool, err error) {
	if d.res.Transcoded = isTranscoded(resp); d.res.Transcoded {
		if d.spec.End > 0 {
			return 0, false, fmt.Errorf("%w: a slice of a transcoded (decompressed) object", errProtocol)
		}
		d.size = -1 // the decompressed length is unknown until the end
		if d.d.off > 0 {
			if !d.dst.restartable() {
				return 0, false, fmt.Errorf("%w: a transcoded (decompressed) download cannot resume after a break", errProtocol)
			}
			d.d = newDigest(false) // start over: rewrite from byte 0
		}
		return 0, false, nil
	}
	if resp.ContentLength >= 0 {
		d.size = resp.ContentLength
	}
	d.trySplit()
	// A server that ignored our Range sends everything: skip what we have.
	return d.d.off, false, nil
}

// trySplit offers a fresh download's first response to spec.Split, once.
func (d *download) trySplit() {
	sp := &d.spec
	if sp.Split == nil || d.split || d.size <= 0 || d.d.off != 0 || sp.Offset != 0 || sp.Start != 0 || sp.End != 0 {
		return
	}
	d.split = true
	if end := sp.Split(d.size, d.res.Generation, d.res.ContentEncoding); end > 0 && end < d.size {
		sp.End = end
	}
}

// pin records the generation, hashes and encoding of the first response and
// checks that later ones describe the same object.
func (d *download) pin(resp *http.Response) error {
	gen, err := strconv.ParseInt(resp.Header.Get("X-Goog-Generation"), 10, 64)
	if err == nil {
		if d.res.Generation != 0 && gen != d.res.Generation {
			return fmt.Errorf("%w: generation %d answered for pinned generation %d", errProtocol, gen, d.res.Generation)
		}
		d.res.Generation = gen
	}
	h, err := parseGoogHash(resp.Header.Values("X-Goog-Hash"))
	if err != nil {
		return fmt.Errorf("%w: %w", errProtocol, err)
	}
	if d.res.Hashes.HasCRC32C && h.HasCRC32C && h.CRC32C != d.res.Hashes.CRC32C {
		return fmt.Errorf("%w: the object's crc32c changed between requests", errProtocol)
	}
	if h.HasCRC32C {
		d.res.Hashes = h
	}
	if enc := resp.Header.Get("X-Goog-Stored-Content-Encoding"); enc != "identity" {
		d.res.ContentEncoding = enc
	}
	return nil
}

// started reports the first response once.
func (d *download) start(status int) {
	if !d.started {
		d.started = true
		d.emit(Event{Kind: EventStarted, Size: d.size, Status: status, Generation: d.res.Generation})
	}
}

// copyBody writes the body to the destination and the digest. The
// watchdog is paused while the destination writes: a slow disk is not a
// stalled network.
func (d *download) copyBody(body io.Reader, skip int64, dog *watchdog) (done bool, err error) {
	if skip > 0 {
		n, err := io.CopyN(io.Discard, body, skip)
		d.received += n
		if err != nil {
			return false, err
		}
	}
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	end := d.end()
	for {
		n, rerr := body.Read(buf)
		d.received += int64(n)
		if d.size >= 0 && d.d.off+int64(n) > d.size {
			return false, fmt.Errorf("%w: the body runs past the object's %d bytes", errProtocol, d.size)
		}
		if d.spec.End > 0 && d.d.off+int64(n) >= end {
			// A slice is complete; a whole object's body (a server that
			// ignored Range) has more, which is not read.
			n, rerr = int(end-d.d.off), io.EOF
		}
		if n > 0 {
			dog.pause()
			werr := d.dst.write(buf[:n], d.d.off)
			dog.resume()
			if werr != nil {
				return false, &SourceError{Offset: d.d.off, Err: fmt.Errorf("writing the destination: %w", werr)}
			}
			d.d.Write(buf[:n])
			if d.d.off-d.reported >= int64(d.c.chunkSize) {
				d.progress()
			}
		}
		if rerr != nil {
			d.progress()
		}
		switch {
		case errors.Is(rerr, io.EOF):
			return end < 0 || d.d.off == end, nil
		case rerr != nil:
			return false, rerr
		}
	}
}

// progress reports the bytes written, once per new offset, and the bytes
// received since the last report.
func (d *download) progress() {
	if d.d.off != d.reported || d.received != d.receivedReported {
		d.reported = d.d.off
		n := d.received - d.receivedReported
		d.receivedReported = d.received
		d.emit(Event{Kind: EventProgress, Persisted: d.d.off, Size: d.size, Length: n})
	}
}

// copyBufs holds the 64 KiB buffers downloads copy through: a download
// holds one, and a program downloading many objects reuses them.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// stat reads the object's metadata (JSON API) for its checksum.
func (d *download) stat(ctx context.Context) error {
	u := d.c.endpoint + "/storage/v1/b/" + url.PathEscape(d.spec.Bucket) + "/o/" + url.PathEscape(d.spec.Object) +
		"?generation=" + strconv.FormatInt(d.res.Generation, 10)
	req, err := http.NewRequest(http.MethodGet, u, http.NoBody)
	if err != nil {
		return err
	}
	d.spec.Key.set(req.Header)
	return d.c.send(ctx, "stat", req, nil, func(resp *http.Response, _ *watchdog) error {
		if resp.StatusCode != http.StatusOK {
			return statusError(resp, nil, false)
		}
		var obj storage.Object
		if err := decodeJSON(resp, &obj); err != nil {
			return err
		}
		c, err := DecodeCRC32C(obj.Crc32c)
		if err != nil {
			return fmt.Errorf("%w: %w", errProtocol, err)
		}
		d.res.Hashes = Hashes{CRC32C: c, HasCRC32C: true}
		return nil
	})
}
