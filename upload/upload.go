package upload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/internal/state"
	"github.com/gcsput/gcsput/internal/walk"
	"github.com/gcsput/gcsput/resumable"
	raw "google.golang.org/api/storage/v1"
)

// Item is one transfer of a batch: a local path and an object.
type Item struct {
	Local  string // a local file path
	Remote URL    // gs://bucket/object
	// Metadata, if set, is custom metadata for this item's upload alone,
	// added over UploadOptions.Attrs.Metadata (the POSIX keys of
	// PreservePOSIX are the file's, whatever it says). Downloads ignore it.
	Metadata map[string]string
}

// uploadOptions are o with the item's own metadata.
func (it Item) uploadOptions(o UploadOptions) UploadOptions {
	if len(it.Metadata) == 0 {
		return o
	}
	md := make(map[string]string, len(o.Attrs.Metadata)+len(it.Metadata))
	maps.Copy(md, o.Attrs.Metadata)
	maps.Copy(md, it.Metadata)
	o.Attrs.Metadata = md
	return o
}

// UploadFile uploads the local file src to dst. The Result is never nil, even
// on failure; its Err is the returned error. A dst that is a folder (its
// object ends in "/", or a bucket alone) gets src's base name appended, as
// the CLI's cp does: gs://b/dir/ means gs://b/dir/FILE. So do the items of
// Upload and UploadSeq.
//
// Files smaller than Options.SmallFileThreshold go in one multipart request;
// larger ones through a resumable session saved in the state directory after
// every chunk, so that if this process dies, the same call in a later process
// resumes from the server's offset (Status "resumed"). A saved session is not
// used, and the upload starts over with a Note saying why, when the file
// changed since (size, mtime or inode), when the session is older than
// MaxSessionAge, or when the server no longer knows it (404/410). Files of
// at least Options.ParallelThreshold may go up as a parallel composite
// upload (see Options.ParallelUpload), saved and resumed alike, component
// by component; Note then says "composite of N components".
func (c *Client) UploadFile(ctx context.Context, src string, dst URL, o UploadOptions) (*Result, error) {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return failedResult(src, dst.String(), err), err
	}
	defer leave()
	if ctx, err = c.withKeys(ctx, o.Encryption, "UploadOptions"); err != nil {
		return failedResult(src, dst.String(), err), err
	}
	r := c.uploadFile(ctx, src, dst, o, nil)
	return r, r.Err
}

// uploadFile runs one file upload and fills in its Result. saved, when not
// nil, holds the keys of the records saved before the batch started (see
// savedKeys); nil means any record may exist.
func (c *Client) uploadFile(ctx context.Context, src string, dst URL, o UploadOptions, saved map[string]bool) *Result {
	start := time.Now()
	dst = intoFolder(src, dst)
	r := &Result{Source: src, Dest: dst.String(), Bucket: dst.Bucket, Object: dst.Object, Attempts: 1}
	err := c.hold(ctx, func() error { return c.uploadFileSteps(ctx, r, src, dst, o, saved) })
	r.Elapsed = time.Since(start)
	c.finish(ctx, r, err)
	return r
}

// finish sets the final status from err.
func (c *Client) finish(ctx context.Context, r *Result, err error) {
	defer c.meter.end(r)
	switch {
	case err == nil:
		return
	case ctx.Err() != nil:
		r.Status, r.Err = StatusInterrupted, err
	default:
		r.Status, r.Err = StatusFailed, err
	}
}

// uploadFileSteps: check, open, decide (skip, multipart, resumable).
func (c *Client) uploadFileSteps(ctx context.Context, r *Result, src string, dst URL, o UploadOptions, saved map[string]bool) error {
	if err := checkDest(dst); err != nil {
		return err
	}
	if c.manifested(r) {
		return nil
	}
	opened := c.sums.Time()
	f, fi, err := openSource(ctx, src)
	if err != nil {
		return err
	}
	defer f.Close()
	r.Size = fi.Size()
	abs, err := filepath.Abs(src)
	if err != nil {
		return err
	}
	if skip, err := c.precheck(ctx, r, f, fi.Size(), dst, o); skip || err != nil {
		return err
	}
	key := state.Key(state.KindUpload, abs, dst.String(), c.opts.Shard)
	ctx, cl := c.claimFor(ctx, key)
	defer cl.release()
	if c.mayRecord(key, fi.Size(), saved) {
		// A lock that cannot be made (a full state directory) fails no
		// upload: its saves fail too, and say so (saveFailed).
		if err := cl.take(); errors.Is(err, ErrInUse) {
			return fmt.Errorf("upload: %w", busy(src, dst.String(), err))
		}
	}
	err = cl.stopped(c.uploadClaimed(ctx, r, f, fi, abs, dst, o, saved))
	if err == nil {
		c.uploadedSum(r, abs, fi, opened)
	}
	return err
}

// mayRecord reports whether an upload of size bytes may read or write a
// record under key, and so must hold its lock (see claim): a record is
// saved, or the file is large enough to be resumable or composite. A small
// file sent in one request takes no lock, which costs a batch of them
// nothing.
func (c *Client) mayRecord(key string, size int64, saved map[string]bool) bool {
	small := c.opts.SmallFileThreshold
	if p := c.opts.ParallelThreshold; p >= 0 && p < small {
		small = p
	}
	return c.store != nil && (saved == nil || saved[key] || size >= small)
}

// uploadClaimed: decide (saved, composite, multipart, resumable) and upload.
func (c *Client) uploadClaimed(ctx context.Context, r *Result, f *os.File, fi fs.FileInfo, abs string, dst URL, o UploadOptions, saved map[string]bool) error {
	attrs := o.Attrs
	var posix fs.FileInfo
	if o.PreservePOSIX {
		posix = fi
	}
	attrs = attrs.withDefaults(dst.Object, posix)
	fp := state.FingerprintOf(abs, fi)
	rec, note, err := c.savedUpload(ctx, abs, dst, fp, saved, encryptionOf(c.spec(ctx, dst, fp.Size, attrs, o)))
	if err != nil {
		return err
	}
	if rec != nil && len(rec.Upload.Components) == 0 {
		rec, note = c.otherConditions(ctx, rec, o)
	}
	r.Note = note
	switch {
	case rec != nil && len(rec.Upload.Components) > 0:
		return c.compositeFile(ctx, r, f, fp, dst, attrs, o, rec, nil)
	case rec != nil:
		return c.resumableFile(ctx, r, f, fp, dst, attrs, o, rec)
	}
	if ok, v := c.composesAhead(ctx, fi.Size(), dst, attrs); ok {
		if err := c.compositeFile(ctx, r, f, fp, dst, attrs, o, nil, v); !errors.Is(err, errUploadWhole) {
			return err
		}
	}
	if fi.Size() < c.opts.SmallFileThreshold {
		return c.multipart(ctx, r, f, fp, dst, attrs, o)
	}
	return c.resumableFile(ctx, r, f, fp, dst, attrs, o, nil)
}

// savedKeys lists the store once for a batch, so that each of its files
// looks up its saved session in memory rather than by opening a file that
// almost never exists. Only records saved before the batch started can be
// resumed by it; the batch's own are written by the files themselves. nil:
// no list (no store, or it could not be read), so every file looks.
func (c *Client) savedKeys() map[string]bool {
	if c.store == nil {
		return nil
	}
	return c.store.Keys()
}

// checkDest validates an upload destination.
func checkDest(dst URL) error {
	if err := validateBucket(dst.Bucket); err != nil {
		return err
	}
	return validateObject(dst.Object)
}

// openSource opens a regular file for reading, with errors that name it.
// Opening a named pipe would block until some other process writes to it:
// on Unix the file is opened non-blocking (which regular files ignore) and
// checked after; elsewhere it is looked at before it is opened. The
// non-blocking open is also the cheaper one: os.Open of a regular file
// costs four fcntl calls besides the open (it tries, and fails, to put the
// file in the network poller). With the stat gone, a small file's upload
// takes 13 system calls instead of 18 (strace -c of gcsput cp -r).
func openSource(ctx context.Context, src string) (*os.File, fs.FileInfo, error) {
	if openNonblock == 0 {
		fi, err := os.Stat(src)
		if err != nil {
			return nil, nil, fmt.Errorf("upload: %w", err)
		}
		if err := regular(src, fi); err != nil {
			return nil, nil, err
		}
	}
	f, err := withFDs(ctx, func() (*os.File, error) { return os.OpenFile(src, os.O_RDONLY|openNonblock, 0) })
	if err != nil {
		return nil, nil, fmt.Errorf("upload: %w", err)
	}
	fi, err := f.Stat()
	if err == nil {
		err = regular(src, fi)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

func regular(src string, fi fs.FileInfo) error {
	switch {
	case fi.IsDir():
		return fmt.Errorf("upload: %s is a directory (use UploadDir)", src)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("upload: %s is not a regular file (%s)", src, walk.TypeName(fi.Mode()))
	}
	return nil
}

// precheck applies NoClobber and SkipUnchanged before any byte is sent.
func (c *Client) precheck(ctx context.Context, r *Result, f *os.File, size int64, dst URL, o UploadOptions) (skip bool, err error) {
	if !o.NoClobber && !o.SkipUnchanged {
		return false, nil
	}
	attrs, err := c.Stat(ctx, dst)
	if errors.Is(err, storage.ErrObjectNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	skipped := func(note string) (bool, error) {
		r.Status, r.Note, r.Generation, r.CRC32C, r.Size = StatusSkipped, note, attrs.Generation, attrs.CRC32C, attrs.Size
		return true, nil
	}
	if o.NoClobber {
		return skipped("exists")
	}
	if attrs.Size != size {
		return false, nil
	}
	crc, err := c.localCRC(f.Name(), f)
	if err != nil {
		return false, err
	}
	if crc == attrs.CRC32C {
		return skipped("unchanged")
	}
	return false, nil
}

// savedUpload returns the saved session for abs → dst if one may be resumed
// (a composite upload's record included: the record, not the options,
// decides how a saved upload goes on); otherwise nil, with a note when a
// saved session was discarded. A composite upload discarded because the
// file changed is abandoned: its components are of an old version.
//
// A saved upload started under another encryption than want (its key's
// SHA256 or Cloud KMS key) is neither continued nor started over: the error
// matches resumable.ErrEncryptionKey and the record stays for the run that
// has the key. Starting over would drop the key the upload was asked for.
func (c *Client) savedUpload(ctx context.Context, abs string, dst URL, fp state.Fingerprint, saved map[string]bool, want copyDest) (*state.Record, string, error) {
	if c.store == nil {
		return nil, "", nil
	}
	key := state.Key(state.KindUpload, abs, dst.String(), c.opts.Shard)
	if saved != nil && !saved[key] {
		return nil, "", nil // not saved when the batch started: no file to open
	}
	rec, err := c.store.Load(key)
	if err != nil || !c.store.Trusted(rec, c.endpoint) || rec.Shard != c.opts.Shard {
		return nil, "", nil // another shard's session is left alone
	}
	if rec.Upload != nil && len(rec.Upload.Dest) > 0 {
		var enc copyDest
		if err := json.Unmarshal(rec.Upload.Dest, &enc); err == nil {
			if err := encryptionChange("upload", enc, want); err != nil {
				return nil, "", fmt.Errorf("upload: %s -> %s: %w", abs, dst, err)
			}
		}
	}
	why := ""
	switch {
	case rec.Upload == nil || rec.Upload.Session == nil && len(rec.Upload.Components) == 0:
		why = "saved session unusable"
	case len(rec.Upload.Components) > 0 && checkPlan(rec, dst) != nil:
		why = "saved composite upload unusable (" + checkPlan(rec, dst).Error() + ")"
	case c.store.Expired(rec):
		why = "saved session older than 6.5 days"
	default:
		if ch := rec.Fingerprint.Change(fp); ch != "" {
			why = "source changed since the saved session (" + ch + ")"
			if len(rec.Upload.Components) > 0 {
				if _, err := c.dropComposite(ctx, rec); err != nil {
					c.warn(fmt.Sprintf("%s: the composite upload of the old version was abandoned: %v", dst, err))
				}
			}
		}
	}
	if why != "" {
		c.store.Remove(key)
		return nil, why + ": started over", nil
	}
	return rec, "", nil
}

// otherConditions drops a saved resumable session started under other
// preconditions than o's (NoClobber, IfGenerationMatch): GCS checks the ones
// the session was started with, so resuming it would replace an object the
// call says must not be replaced (a session started without a condition,
// rerun with IfGenerationMatch 0), or fail on one the call allows. The
// session is cancelled (best effort) and the upload starts over under o. A
// composite upload's record is kept: its compose carries o's conditions.
func (c *Client) otherConditions(ctx context.Context, rec *state.Record, o UploadOptions) (*state.Record, string) {
	var was UploadOptions
	if err := decodeOptions(rec.Upload.Options, &was); err == nil &&
		was.doesNotExist() == o.doesNotExist() && was.generationMatch() == o.generationMatch() {
		return rec, ""
	}
	if rc, err := c.resumable(nil); err == nil {
		_ = rc.Cancel(context.WithoutCancel(ctx), rec.Upload.Session)
	}
	c.store.Remove(rec.Key())
	return nil, "saved session started with other preconditions (NoClobber, IfGenerationMatch): started over"
}

// uploadRecord is the record of a fresh resumable upload.
// enc is the encryption it was started under (see encryptionOf).
func uploadRecord(fp state.Fingerprint, dst URL, s *resumable.Session, o UploadOptions, enc copyDest) *state.Record {
	return &state.Record{Kind: state.KindUpload, Source: fp.Path, Dest: dst.String(), Fingerprint: fp,
		Size: s.Size, Upload: &state.Upload{Session: s, Options: encodeOptions(o), Dest: enc.encode()}}
}

// spec is the initiation request of an upload, under the call's keys.
func (c *Client) spec(ctx context.Context, dst URL, size int64, a Attrs, o UploadOptions) resumable.ObjectSpec {
	keys := c.keys(ctx)
	if a.KMSKeyName == "" && len(keys.Key) == 0 {
		a.KMSKeyName = keys.KMSKeyName
	}
	sp := resumable.ObjectSpec{
		Key:    keys.Key,
		Bucket: dst.Bucket, Name: dst.Object, Size: size,
		ContentType: a.ContentType, CacheControl: a.CacheControl, ContentDisposition: a.ContentDisposition,
		ContentEncoding: a.ContentEncoding, ContentLanguage: a.ContentLanguage, Metadata: nonEmpty(a.Metadata),
		StorageClass: a.StorageClass, KMSKeyName: a.KMSKeyName, DoesNotExist: o.doesNotExist(),
		GenerationMatch: o.generationMatch(), CustomTime: a.CustomTime,
	}
	a.Holds.apply(&sp)
	return sp
}

// done fills a result from the object the server created.
func done(r *Result, obj *raw.Object, status Status) {
	r.Status, r.Generation, r.Size = status, obj.Generation, int64(obj.Size)
	if crc, err := resumable.DecodeCRC32C(obj.Crc32c); err == nil {
		r.CRC32C = crc
	}
}

// intoFolder is the rule for a destination that names a folder, the CLI's:
// an object ending in "/", or none (a bucket), gets the file's base name.
func intoFolder(src string, dst URL) URL {
	if dst.Bucket != "" && (dst.Object == "" || strings.HasSuffix(dst.Object, "/")) {
		dst.Object += filepath.Base(src)
	}
	return dst
}
