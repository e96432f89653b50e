package upload

import (
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"os"
	"sync"

	"github.com/gcsput/gcsput/internal/state"
	"github.com/gcsput/gcsput/resumable"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// multipart uploads a small file in one request (resumable's Insert): its
// CRC32C goes with the metadata, so the server refuses the object if the
// bytes it received differ, and the file is checked unchanged after it was
// read and before it is sent. The request is retried under the policy.
//
// With NoClobber (ifGenerationMatch=0) a retry can meet the object its own
// earlier attempt created (the response was lost): a 412 after a failed
// attempt is therefore checked against the object's size and CRC32C before
// being called "exists".
func (c *Client) multipart(ctx context.Context, r *Result, f *os.File, fp state.Fingerprint, dst URL, a Attrs, o UploadOptions) error {
	t := c.newTracker(r, dst)
	var crc uint32 // the file's, from EventStarted
	attempts := 1  // of the insert, not of any Stat before it
	rc, err := c.resumable(func(e resumable.Event) {
		switch e.Kind {
		case resumable.EventStarted:
			crc, _ = resumable.DecodeCRC32C(e.CRC32C)
		case resumable.EventRetry:
			attempts++
		}
		t.onEvent(e)
	})
	if err != nil {
		return err
	}
	c.progress(r, 0, fp.Size) // in flight: a progress display can name it
	obj, err := rc.Insert(ctx, c.spec(ctx, dst, fp.Size, a, o), checkedFile{f, fp})
	if ch := sourceChanged(f.Name(), fp, err); ch != "" {
		return changedError("upload: %s changed while being uploaded (%s); nothing was written to %s: upload it again", f.Name(), ch, dst)
	}
	if (o.NoClobber || o.IfGenerationMatch != nil) && isStatus(err, http.StatusPreconditionFailed) {
		return c.afterPrecondition(ctx, r, dst, fp.Size, crc, attempts, o, err)
	}
	if err != nil {
		return fmt.Errorf("upload: %s: %w", dst, err)
	}
	done(r, obj, r.statusAfter(false))
	c.progress(r, fp.Size, fp.Size)
	return nil
}

// afterPrecondition decides what a 412 (cause) under NoClobber or
// IfGenerationMatch means. After a failed attempt, an object with our size
// and CRC32C is our own earlier attempt's, whose reply was lost: uploaded.
// Otherwise NoClobber met an existing object ("skipped: exists"), and
// IfGenerationMatch a generation other than the one named (an error).
func (c *Client) afterPrecondition(ctx context.Context, r *Result, dst URL, size int64, crc uint32, attempts int, o UploadOptions, cause error) error {
	attrs, err := c.Stat(ctx, dst)
	own := err == nil && attempts > 1 && attrs.Size == size && attrs.CRC32C == crc
	switch {
	case !own && !o.NoClobber:
		return notReplaced(dst, o, cause)
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
