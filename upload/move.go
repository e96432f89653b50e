package upload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gcsput/gcsput/internal/state"
	"github.com/gcsput/gcsput/resumable"
)

// StatusMoved: the destination was written and verified, then the source
// removed (see [Client.Move]).
const StatusMoved Status = "moved"

// ErrSourceKept is matched (errors.Is) by the error of a move that wrote
// its destination but did not remove the source: the verification failed,
// the source changed after it was copied, or its removal failed. Both
// exist; the error says which step stopped and what each side holds.
var ErrSourceKept = errors.New("the source was kept (both exist)")

// MoveOptions are the per-call choices of a move.
type MoveOptions struct {
	// NoClobber never replaces an existing destination: such a move is
	// "skipped" (Note "exists") and its source is kept.
	NoClobber bool
	// Upload applies to moves of local files to GCS (metadata, storage
	// class): its NoClobber is this NoClobber, and SkipUnchanged and
	// IfGenerationMatch are not used. Download applies to moves of objects
	// to local files (Decompress, PreservePOSIX): its NoClobber is
	// this NoClobber, SkipUnchanged is not used. The zero value moves with
	// the defaults of UploadFile and Download.
	Upload   UploadOptions
	Download DownloadOptions
	// Encryption, when set, is the keys of this move: they replace the
	// Client's (Options.EncryptionKey, KMSKeyName, DecryptionKeys) to read
	// the source and write the destination. nil: the Client's. Upload's and
	// Download's own Encryption must be nil (ErrBadOption): set this one.
	Encryption *Encryption
}

// MoveItem is one move of a batch: a local file ([LocalSide]) or an object
// ([RemoteSide]) each side, at least one of them an object.
type MoveItem struct {
	Src, Dst Side
}

// Move moves one file or object: local file → object, object → local file,
// or object → object. The names are exact: Dst is the file or object to
// write, never a folder to write into. The Result is never nil; its Err is
// the returned error.
//
// The source is removed only after the destination is verified, and only
// if it is still what was copied, so a failure at any step leaves both,
// never neither:
//   - local → gs: the file is uploaded as [Client.UploadFile] does (the
//     server checks the CRC32C of the bytes read); the object's live
//     generation, size and CRC32C are read back and must be the upload's;
//     the file must still have the fingerprint (size, mtime, ctime, inode)
//     it had before the upload started; then it is removed.
//   - gs → local: the object is downloaded as [Client.Download] does (the
//     CRC32C of every byte checked before the rename), the file must be
//     there with the object's size, and the object is deleted under
//     ifGenerationMatch of the generation downloaded: a newer one, written
//     since, is kept (412).
//   - gs → gs inside one bucket (and no holds asked of the destination by
//     Upload.Attrs.Holds, which a move cannot add): one objects.move call, under
//     ifSourceGenerationMatch of the generation read (and
//     ifGenerationMatch=0 with NoClobber): no bytes copied and no moment
//     with neither, so nothing to verify or save. It applies when the
//     destination would be encrypted as the source is (the client's key or
//     KMS key is the source's, or none); otherwise, and on a server that
//     does not serve objects.move (501) or refuses it (400), the move
//     copies as across buckets.
//   - gs → gs across buckets: a server-side copy of the generation read,
//     checked like an upload (the destination's CRC32C must be the
//     source's), then the source deleted under ifGenerationMatch of that
//     generation.
//
// A move whose destination exists but whose source was kept fails with an
// error matching ErrSourceKept.
func (c *Client) Move(ctx context.Context, src, dst Side, o MoveOptions) (*Result, error) {
	ctx, leave, err := c.enter(ctx) // Close cancels and waits for it
	if err != nil {
		return failedResult(src.String(), dst.String(), err), err
	}
	defer leave()
	if ctx, err = c.withKeys(ctx, o.Encryption, "MoveOptions"); err != nil {
		return failedResult(src.String(), dst.String(), err), err
	}
	if err := o.check(); err != nil {
		return failedResult(src.String(), dst.String(), err), err
	}
	r := c.move(ctx, MoveItem{Src: src, Dst: dst}, o)
	return r, r.Err
}

// move runs one move and sets its final status.
func (c *Client) move(ctx context.Context, it MoveItem, o MoveOptions) *Result {
	start := time.Now()
	var r *Result
	err := errors.Join(moveSide("source", it.Src), moveSide("destination", it.Dst))
	srcURL, dstURL := it.Src.URL(), it.Dst.URL()
	switch {
	case err != nil:
		r = &Result{Source: it.Src.String(), Dest: it.Dst.String(), Status: StatusFailed, Err: err}
	case it.Src.IsRemote() && it.Dst.IsRemote():
		r = c.moveAcross(ctx, srcURL, dstURL, 0, o, false)
	case it.Src.IsRemote():
		r = c.moveDown(ctx, srcURL, it.Dst.Dir(), func(ctx context.Context) *Result {
			d, _ := c.Download(ctx, srcURL, it.Dst.Dir(), o.downloadOptions())
			return d
		})
	case it.Dst.IsRemote():
		r = c.moveUp(ctx, it.Src.Dir(), dstURL, o)
	default:
		r = &Result{Source: it.Src.String(), Dest: it.Dst.String(), Status: StatusFailed,
			Err: fmt.Errorf("move: %w: neither %s nor %s is an object (a RemoteSide)", ErrBadOption, it.Src, it.Dst)}
	}
	r.Elapsed = time.Since(start)
	return r
}

// moveSide checks one side of a move: a local path, or one object.
func moveSide(what string, s Side) error {
	switch u := s.URL(); {
	case s == Side{}:
		return fmt.Errorf("move: %w: the %s is the zero Side: make it with LocalSide, RemoteSide or ParseSide", ErrBadOption, what)
	case !s.IsRemote() && s.Dir() == "":
		return fmt.Errorf("move: %w: the %s is an empty local path", ErrBadOption, what)
	case !s.IsRemote():
		return nil
	case u.Object == "" || strings.HasSuffix(u.Object, "/"):
		return fmt.Errorf("move: %w: %s names a bucket or folder, not an object", ErrBadOption, u)
	default:
		return checkDest(u)
	}
}

func (o MoveOptions) uploadOptions() UploadOptions {
	u := o.Upload
	u.NoClobber, u.SkipUnchanged, u.IfGenerationMatch = o.NoClobber, false, nil
	return u
}

// check refuses options no move can honour.
func (o MoveOptions) check() error {
	if o.Upload.Encryption != nil || o.Download.Encryption != nil {
		return fmt.Errorf("move: %w: MoveOptions.Upload.Encryption and Download.Encryption are not used: set MoveOptions.Encryption", ErrBadOption)
	}
	if o.Download.Generation != 0 {
		return fmt.Errorf("move: %w: MoveOptions.Download.Generation: a move reads the live generation (and deletes it after); download an older one with Download", ErrBadOption)
	}
	return nil
}

func (o MoveOptions) downloadOptions() DownloadOptions {
	d := o.Download
	d.NoClobber, d.SkipUnchanged = o.NoClobber, false
	return d
}

// moveUp moves the local file src to the object dst.
func (c *Client) moveUp(ctx context.Context, src string, dst URL, o MoveOptions) *Result {
	abs, err := filepath.Abs(src)
	var fi os.FileInfo
	if err == nil {
		fi, err = os.Stat(src)
	}
	if err != nil {
		return &Result{Source: src, Dest: dst.String(), Bucket: dst.Bucket, Object: dst.Object, Status: StatusFailed,
			Err: fmt.Errorf("move: %w", err)}
	}
	before := state.FingerprintOf(abs, fi) // before the upload opens it
	r := c.uploadFile(ctx, src, dst, o.uploadOptions(), nil)
	if !copied(r) {
		return r
	}
	return c.removeAfter(ctx, r, c.verifyObject(ctx, dst, r.Generation, r.CRC32C, before.Size), func() error {
		if ch := changedSince(src, before); ch != "" {
			return fmt.Errorf("%s changed since it was uploaded (%s); %s holds the version before: %w", src, ch, dst, ErrSourceKept)
		}
		if err := os.Remove(src); err != nil {
			return fmt.Errorf("removing %s (%s holds it): %w: %w", src, dst, err, ErrSourceKept)
		}
		return nil
	})
}

// moveDown moves the object src to the local file dst, written by fetch.
func (c *Client) moveDown(ctx context.Context, src URL, dst string, fetch func(context.Context) *Result) *Result {
	if r, ok := c.finishSaved(ctx, src, dst); ok {
		return r
	}
	r := fetch(ctx)
	if !copied(r) {
		return r
	}
	verify := func() error {
		fi, err := os.Stat(r.Dest)
		want := r.Size
		if r.Decompressed > 0 {
			want = r.Decompressed
		}
		switch {
		case err != nil:
			return fmt.Errorf("%s is not there after the download: %w: %w", r.Dest, err, ErrSourceKept)
		case fi.Size() != want:
			return fmt.Errorf("%s holds %d bytes, not the %d downloaded: %w", r.Dest, fi.Size(), want, ErrSourceKept)
		}
		return nil
	}
	return c.removeAfter(ctx, r, verify(), func() error { return c.deleteCopied(ctx, r, src, r.Generation) })
}

// moveAcross moves the object src to the object dst by a server-side copy
// of generation gen (0: the live one, read first); restore resumes a saved
// move's copy as it was started (Client.Resume).
func (c *Client) moveAcross(ctx context.Context, src, dst URL, gen int64, o MoveOptions, restore bool) *Result {
	fail := func(err error) *Result {
		r := &Result{Source: src.String(), Dest: dst.String(), Bucket: dst.Bucket, Object: dst.Object, Attempts: 1}
		c.finish(ctx, r, err)
		return r
	}
	if src == dst {
		return fail(fmt.Errorf("move: %w: %s is both source and destination", ErrBadOption, src))
	}
	if r, ok := c.finishSaved(ctx, src, dst.String()); ok {
		return r
	}
	attrs, err := c.Stat(ctx, src)
	if err == nil && gen != 0 && attrs.Generation != gen {
		err = fmt.Errorf("its generation is %d, not the %d listed: it changed since", attrs.Generation, gen)
	}
	if err != nil {
		return fail(fmt.Errorf("move: %s: %w", src, err))
	}
	holds := o.Upload.Attrs.Holds // the destination's, as cp's --temporary-hold & co. give them
	if holds.none() && c.atomicMoveFits(ctx, src, dst, attrs, restore) {
		if r, err := c.moveAtomic(ctx, src, dst, attrs, o.NoClobber); !errors.Is(err, errNoAtomicMove) {
			return r
		}
	}
	r, err := c.moveCopy(ctx, src, dst, attrs, o.NoClobber, restore, holds)
	if err != nil {
		c.finish(ctx, r, fmt.Errorf("move: copying %s to %s (not moved: the source is untouched): %w", src, dst, err))
		return r
	}
	if !copied(r) {
		return r
	}
	verify := c.verifyObject(ctx, dst, r.Generation, attrs.CRC32C, attrs.Size)
	return c.removeAfter(ctx, r, verify, func() error { return c.deleteCopied(ctx, r, src, attrs.Generation) })
}

// copied reports whether the copy step wrote the destination, so that the
// move may go on: not when it failed, was interrupted or skipped (-n),
// which the result then says of the source.
func copied(r *Result) bool {
	switch {
	case r.Status == StatusSkipped:
		r.Note += "; source kept"
	case !r.OK():
		r.Err = fmt.Errorf("%w (not moved: the source is untouched)", r.Err)
	}
	return r.OK() && r.Status != StatusSkipped
}

// removeAfter ends a move whose destination r was written: when verified
// (verr nil) and not interrupted, remove takes the source away. The result
// is moved, or failed (interrupted) with both kept.
func (c *Client) removeAfter(ctx context.Context, r *Result, verr error, remove func() error) *Result {
	err := verr
	if err == nil && ctx.Err() != nil {
		err = fmt.Errorf("interrupted after the copy to %s, before the source was removed: %w: %w", r.Dest, ctx.Err(), ErrSourceKept)
	}
	if err == nil {
		err = remove()
	}
	if err != nil {
		c.finish(ctx, r, fmt.Errorf("move: %w", err))
		return r
	}
	r.Status = StatusMoved
	return r
}

// verifyObject checks that the live object u is generation gen with the
// CRC32C and size of the source.
func (c *Client) verifyObject(ctx context.Context, u URL, gen int64, crc uint32, size int64) error {
	a, err := c.Stat(ctx, u)
	switch {
	case err != nil:
		return fmt.Errorf("verifying %s: %w: %w", u, err, ErrSourceKept)
	case a.Generation != gen:
		return fmt.Errorf("%s was replaced after the copy (generation %d, not %d): %w", u, a.Generation, gen, ErrSourceKept)
	case a.CRC32C != crc || a.Size != size:
		return fmt.Errorf("%s does not match its source: CRC32C %s and %d bytes, not %s and %d: %w",
			u, resumable.EncodeCRC32C(a.CRC32C), a.Size, resumable.EncodeCRC32C(crc), size, ErrSourceKept)
	}
	return nil
}
