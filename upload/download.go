package upload

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/gcsput/gcsput/internal/gzmeta"
	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/internal/posix"
	"github.com/gcsput/gcsput/internal/state"
	"github.com/gcsput/gcsput/resumable"
)

// partialSuffix marks the temporary file a download writes beside its
// target: ".NAME.gcsput-partial".
const partialSuffix = ".gcsput-partial"

// maxVerifyRestarts is how many times a download whose bytes did not match
// the object's CRC32C is fetched again from zero before it fails.
const maxVerifyRestarts = 2

// target is where one download goes: a name below a root directory, which
// every file operation goes through, so no object name and no symlink in the
// tree can make a write land outside it.
type target struct {
	root *os.Root
	name string // relative to root, OS separators
	abs  string // absolute path of the target, for results and records
}

func (t target) temp() string { return tempPath(t.name) }

// Download downloads the object src to the local file dst, through a
// temporary file beside it that is renamed over dst only after the CRC32C of
// every byte matched the object's. If the process dies, the same call later
// continues the partial file from where it stopped, provided the object's
// generation is still the same (Status "resumed"); otherwise it starts over
// and says why in Note. The Result is never nil; its Err is the returned
// error. A dst ending in a path separator is a folder, made if missing, and
// the object's base name is appended, as the CLI's cp does ("out/" means
// "out/NAME"); an object whose base name is no file name ("a/..") is
// refused with an error matching ErrUnsafePath. So are the items of
// DownloadObjects.
func (c *Client) Download(ctx context.Context, src URL, dst string, o DownloadOptions) (*Result, error) {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return failedResult(src.String(), dst, err), err
	}
	defer leave()
	if ctx, err = c.withKeys(ctx, o.Encryption, "DownloadOptions"); err != nil {
		return failedResult(src.String(), dst, err), err
	}
	if dst, err = fileInFolder(src, dst); err != nil {
		return failedResult(src.String(), dst, err), err
	}
	start := time.Now()
	r := &Result{Source: src.String(), Dest: dst, Bucket: src.Bucket, Object: src.Object, Attempts: 1}
	err = c.hold(ctx, func() error { return c.downloadFile(ctx, r, src, dst, o) })
	r.Elapsed = time.Since(start)
	c.finish(ctx, r, err)
	return r, r.Err
}

func (c *Client) downloadFile(ctx context.Context, r *Result, src URL, dst string, o DownloadOptions) error {
	if err := checkDest(src); err != nil {
		return err
	}
	abs, err := filepath.Abs(dst)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return fmt.Errorf("download: %s is a directory: name the file to write", dst)
	}
	dir := filepath.Dir(abs)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("download: %w", err)
	}
	root, err := withFDs(ctx, func() (*os.Root, error) { return os.OpenRoot(dir) })
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	defer root.Close()
	t := target{root: root, name: filepath.Base(abs), abs: abs}
	var attrs *storage.ObjectAttrs
	switch {
	case o.Generation != 0: // its attrs pin the download to that generation
		if attrs, err = c.statGeneration(ctx, src, o.Generation); err != nil {
			return fmt.Errorf("download: %s#%d: %w", src, o.Generation, err)
		}
	case needAttrs(t, o) || c.hasKeys(ctx):
		if attrs, err = c.Stat(ctx, src); err != nil {
			return fmt.Errorf("download: %s: %w", src, err)
		}
	}
	return c.downloadTo(ctx, r, src, attrs, t, o)
}

// needAttrs reports whether a download must read the object's metadata
// before its bytes: to compare with an existing file, to continue a
// partial one (whose generation must match), or to restore POSIX
// attributes. Otherwise the GET alone is enough: it pins the generation of
// its first response and carries the size and the CRC32C, which saves a
// request per object (most of the cost of a small file).
func needAttrs(t target, o DownloadOptions) bool {
	if o.PreservePOSIX {
		return true
	}
	for _, name := range []string{t.name, t.temp()} {
		if _, err := t.root.Lstat(name); !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}

// downloadTo downloads the object described by attrs to t. With nil attrs
// (see needAttrs) the object is fetched from zero, whatever generation the
// first response has.
func (c *Client) downloadTo(ctx context.Context, r *Result, src URL, attrs *storage.ObjectAttrs, t target, o DownloadOptions) error {
	if c.manifested(r) {
		return nil
	}
	if attrs != nil && attrs.CustomerKeySHA256 != "" {
		// A CSEK object: its key, and its hashes (a listing does not show them).
		if _, err := c.readKey(ctx, attrs); err != nil {
			return fmt.Errorf("download: %w", err)
		}
		var err error
		if attrs, err = c.keyedAttrs(ctx, attrs); err != nil {
			return fmt.Errorf("download: %s: %w", src, err)
		}
	}
	if attrs != nil {
		r.Size, r.Generation = attrs.Size, attrs.Generation
		if skip, err := c.localPrecheck(r, attrs, t, o); skip || err != nil {
			return err
		}
	}
	if dir := filepath.Dir(t.name); dir != "." {
		if err := t.root.MkdirAll(dir, 0o755); err != nil {
			return escaped(r.Object, t, err)
		}
		// Every later step works on one name in that directory: open it
		// once (confined, like its parent), rather than walking to it again
		// for each step, a dozen system calls for a small file.
		sub, err := t.root.OpenRoot(dir)
		if err != nil {
			return escaped(r.Object, t, err)
		}
		defer sub.Close()
		t.root, t.name = sub, filepath.Base(t.name)
	}
	ctx, cl := c.claimFor(ctx, state.Key(state.KindDownload, src.String(), t.abs, c.opts.Shard))
	defer cl.release()
	return cl.stopped(c.fetchVerified(ctx, r, src, attrs, t, o, cl))
}

// fetchVerified fetches the object into t, again (from zero) when the bytes
// did not match their checksum. cl is the download's claim on its record.
func (c *Client) fetchVerified(ctx context.Context, r *Result, src URL, attrs *storage.ObjectAttrs, t target, o DownloadOptions, cl *claim) error {
	for restarts := 0; ; restarts++ {
		saved, note := c.savedDownload(src, t, attrs, cl)
		if note != "" {
			r.Note = note
		}
		err := c.fetchTo(ctx, r, src, attrs, t, o, saved, cl)
		if errors.Is(err, resumable.ErrChecksumMismatch) && restarts < maxVerifyRestarts {
			// Bytes damaged on the way (or in a partial file from an earlier
			// run): the temporary file is gone; fetch the object again.
			r.Note = "checksum mismatch: downloaded again"
			continue
		}
		return err
	}
}

// localPrecheck applies NoClobber and SkipUnchanged to an existing file.
func (c *Client) localPrecheck(r *Result, attrs *storage.ObjectAttrs, t target, o DownloadOptions) (bool, error) {
	fi, err := t.root.Stat(t.name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, escaped(r.Object, t, err)
	}
	if fi.IsDir() {
		return false, fmt.Errorf("download: %s is a directory", t.abs)
	}
	// What the file would hold: the stored bytes, or their content (Decoded:
	// unknown for a gzip object without gcsput's metadata, which is fetched).
	size, crc, known := attrs.Size, attrs.CRC32C, true
	if o.Decompress {
		size, crc, known = gzmeta.Decoded(attrs)
	}
	switch {
	case o.NoClobber:
		r.Status, r.Note = StatusSkipped, "exists"
		return true, nil
	case o.SkipUnchanged && known && fi.Size() == size:
		f, err := t.root.Open(t.name)
		if err != nil {
			return false, fmt.Errorf("download: %w", err)
		}
		defer f.Close()
		local, err := c.localCRC(t.abs, f)
		if err != nil {
			return false, err
		}
		if local == crc {
			r.Status, r.Note, r.CRC32C = StatusSkipped, "unchanged", attrs.CRC32C
			return true, nil
		}
	}
	return false, nil
}

// saved is where a partial download continues: bytes written from the
// start (Offset), or a sliced download's plan (Slices, each slice continued
// from its Done).
type saved struct {
	Offset int64
	Slices []state.Slice
}

// savedDownload returns where to continue a partial file, or the zero saved
// (with a note when a partial file had to be dropped). Without a state
// directory nothing tells which generation a partial file holds, so it is
// never continued.
func (c *Client) savedDownload(src URL, t target, attrs *storage.ObjectAttrs, cl *claim) (saved, string) {
	if attrs == nil || c.store == nil {
		return saved{}, ""
	}
	fi, err := t.root.Lstat(t.temp())
	if err != nil || plainFile(t.abs, fi) != nil {
		return saved{}, "" // openTemp says what is wrong with it
	}
	var note string
	if err := cl.take(); errors.Is(err, ErrInUse) {
		return saved{}, "" // a live download holds it, and its partial file: openTemp says so
	} else if err != nil {
		// A lock that cannot be made (a read-only or full state directory) is
		// no reason to throw the partial away: the partial file's own lock
		// (openTemp) still keeps a second download off it.
		note = fmt.Sprintf("resumed without the state lock (%v)", err)
	}
	rec, err := c.store.Load(state.Key(state.KindDownload, src.String(), t.abs, c.opts.Shard))
	switch {
	case err != nil || rec.Download == nil || rec.Shard != c.opts.Shard:
		return saved{}, ""
	case rec.Download.Generation != attrs.Generation:
		return saved{}, fmt.Sprintf("object replaced since the partial download (generation %d, now %d): started over",
			rec.Download.Generation, attrs.Generation)
	case rec.Download.Slices != nil:
		// A record is untrusted: its plan must cover this object exactly,
		// in no more slices than this client makes.
		if err := c.checkSaved(rec.Download.Slices, attrs.Size, fi.Size()); err != nil {
			return saved{}, fmt.Sprintf("saved slices unusable (%v): started over", err)
		}
		return saved{Offset: attrs.Size, Slices: rec.Download.Slices}, note
	}
	return saved{Offset: min(fi.Size(), attrs.Size)}, note
}

// checkSaved refuses a saved plan of slices that does not cover the object
// (size bytes) exactly, has more slices than MaxSlices, or whose file does
// not have the object's size (file bytes).
func (c *Client) checkSaved(slices []state.Slice, size, file int64) error {
	switch {
	case len(slices) > c.mostSlices():
		return fmt.Errorf("%d slices, more than the %d this download may use", len(slices), c.mostSlices())
	case file != size:
		return fmt.Errorf("the partial file has %d bytes, the object %d", file, size)
	}
	return state.CheckSlices(slices, size)
}

// fetchTo downloads into the temporary file, from where an earlier run got
// to, and renames it over the target once verified.
func (c *Client) fetchTo(ctx context.Context, r *Result, src URL, attrs *storage.ObjectAttrs, t target, o DownloadOptions, from saved, cl *claim) error {
	f, err := withFDs(ctx, func() (*os.File, error) { return openTemp(t, from.Offset) })
	if err != nil {
		return escaped(src.Object, t, err)
	}
	defer f.Close()
	size, gen := int64(-1), int64(0)
	if attrs != nil {
		size, gen = attrs.Size, attrs.Generation
	}
	// The record is saved at the first response when the object is at
	// least SmallFileThreshold bytes, then every 8 MiB (progressFile) and
	// after a break (the tracker). A smaller object costs no state writes:
	// a process killed during it starts it over, as it would an upload.
	tr := c.newTracker(r, src)
	tr.claim = cl
	tr.rec = &state.Record{Kind: state.KindDownload, Source: src.String(), Dest: t.abs, Size: size, Offset: from.Offset, Shard: c.opts.Shard,
		Download: &state.Download{Generation: gen, Temp: tempPath(t.abs), Options: encodeOptions(o), Slices: from.Slices}}
	w := &progressFile{File: f, c: c, r: r, tr: tr, size: size, saved: from.Offset}
	key, err := c.readKey(ctx, attrs)
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	sl := &slicer{c: c, ctx: ctx, r: r, src: src, f: f, tr: tr, gen: gen, size: size, key: key}
	var res *resumable.DownloadResult
	if from.Slices != nil {
		w.slices = sl
		res, err = sl.resume(attrs.CRC32C)
	} else {
		res, err = c.fetchWhole(ctx, src, gen, from.Offset, w, sl)
	}
	if err != nil {
		none := w.written() == 0
		err = c.downloadFailed(ctx, tr, t, w, err)
		if attrs == nil && none && isStatus(err, http.StatusNotFound) {
			return errMissing(src)
		}
		if gen != 0 && isStatus(err, http.StatusNotFound) {
			return c.pinnedGone(ctx, "download", src, gen, t.abs, err)
		}
		return err
	}
	if attrs == nil && o.Decompress && gzmeta.IsGzip(res.ContentEncoding) && !res.Transcoded {
		// The content is checked against the object's DecodedMetadata: read
		// it, of the generation downloaded.
		if attrs, err = c.statGeneration(ctx, src, res.Generation); err != nil {
			return fmt.Errorf("download: %s: %w", src, err)
		}
	}
	if err := c.place(f, t, src, attrs, res, o, r); err != nil {
		if errors.Is(err, ErrNotGzip) || errors.Is(err, ErrDecodedMismatch) {
			tr.forget() // the object's stored bytes are damaged: nothing to resume
		}
		return err
	}
	tr.forget()
	r.Status, r.Generation, r.Size, r.CRC32C, r.ResumedFrom = StatusDownloaded, res.Generation, res.Size, res.Hashes.CRC32C, from.Offset
	if from.Offset > 0 {
		r.Status = StatusResumed
	}
	if from.Slices != nil {
		r.ResumedFrom = sl.resumedFrom
		if r.ResumedFrom == 0 {
			r.Status = StatusDownloaded // the saved plan had no byte yet
		}
	}
	if o.PreservePOSIX {
		return posix.Restore(t.root, t.name, attrs.Metadata)
	}
	return nil
}

// fetchWhole downloads the object from offset as one stream, or, when its
// first response shows it large enough (Options.SliceThreshold), as slice 0
// of a sliced download (sl) whose other slices start then.
func (c *Client) fetchWhole(ctx context.Context, src URL, gen, offset int64, w *progressFile, sl *slicer) (*resumable.DownloadResult, error) {
	tr := w.tr
	slice0 := sl.eventsOf(0)
	rc, err := c.resumable(func(e resumable.Event) {
		if w.slices != nil {
			slice0(e) // sliced since the first response
			return
		}
		if e.Kind == resumable.EventStarted && tr.rec != nil {
			if tr.rec.Download.Generation == 0 {
				// The generation the download is pinned to, from its first response.
				tr.rec.Download.Generation, tr.rec.Size, w.size = e.Generation, e.Size, e.Size
			}
			if tr.rec.Size >= c.opts.SmallFileThreshold {
				tr.save()
			}
		}
		tr.onEvent(e)
	})
	if err != nil {
		return nil, err
	}
	spec := resumable.DownloadSpec{Bucket: src.Bucket, Object: src.Object, Generation: gen, Offset: offset, Key: sl.key}
	if offset == 0 {
		spec.Split = func(size, gen int64, encoding string) int64 {
			end := sl.split(size, gen, encoding)
			if end > 0 {
				w.slices, w.size = sl, size // on this goroutine: slice 0's writes and events go to sl from here
			}
			return end
		}
	}
	res, err := rc.DownloadAt(ctx, spec, w)
	if w.slices != nil {
		return sl.finish(res, err)
	}
	return res, err
}

// errMissing is what Stat would have said of an object whose download
// met 404 before any byte: storage.ErrObjectNotExist.
func errMissing(src URL) error {
	return fmt.Errorf("download: %s: %w", src, storage.ErrObjectNotExist)
}

// downloadFailed keeps a partial file that can be continued (the record
// notes how far it got) and drops one that cannot. Without a state
// directory none can: no record says which generation it holds, so no
// later run would continue it (savedDownload) or know to remove it.
func (c *Client) downloadFailed(ctx context.Context, tr *tracker, t target, w *progressFile, err error) error {
	var ge *googleapi.Error
	gone := errors.As(err, &ge) && ge.Code == http.StatusNotFound
	if c.store == nil || errors.Is(err, resumable.ErrChecksumMismatch) || gone || errors.Is(err, storage.ErrObjectNotExist) {
		t.root.Remove(t.temp())
		tr.forget()
	} else if tr.rec != nil {
		tr.rec.Offset = w.written()
		tr.save()
	}
	if errors.Is(err, resumable.ErrUnauthorized) {
		return refused(URL{Bucket: tr.r.Bucket, Object: tr.r.Object}, err)
	}
	return err
}

// escaped turns os.Root's refusal to follow a symlink out of the tree into
// an error matching ErrUnsafePath; other errors are returned as they are.
func escaped(object string, t target, err error) error {
	if strings.Contains(err.Error(), "path escapes from parent") {
		return &naming.UnsafePathError{Object: object, Dir: t.root.Name(), Reason: "a symlink on its path leads out of the destination"}
	}
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return fmt.Errorf("download: %w", err)
	}
	return err
}

// commit makes the verified temporary file the target: flushed to disk
// before the rename, and the rename flushed to the directory, so a crash
// never leaves a target with missing bytes.
func commit(f *os.File, t target) error {
	if err := f.Sync(); err != nil {
		return fmt.Errorf("download: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("download: %w", err)
	}
	if err := t.root.Rename(t.temp(), t.name); err != nil {
		return fmt.Errorf("download: %w", err)
	}
	if d, err := t.root.Open(filepath.Dir(t.name)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// progressFile is the download destination: the temporary file, reporting
// progress as bytes are written and noting the offset in the saved record
// every 8 MiB (for Sessions; resuming trusts the file's size). It keeps
// ReadAt, which the resumable package uses to checksum the part written by
// an earlier run. Writes come from one goroutine.
type progressFile struct {
	*os.File
	slices   *slicer // set when the download became sliced: this file is slice 0
	c        *Client
	r        *Result
	tr       *tracker
	size     int64
	end      atomic.Int64 // the highest offset written
	reported int64
	saved    int64
}

func (p *progressFile) WriteAt(b []byte, off int64) (int, error) {
	n, err := p.File.WriteAt(b, off)
	if p.slices != nil {
		p.slices.wrote(0, off+int64(n))
		return n, err
	}
	if e := off + int64(n); e > p.end.Load() {
		p.end.Store(e)
	}
	// Report every MiB and at the end: often enough for a progress bar,
	// rarely enough to cost nothing.
	if e := p.end.Load(); e-p.reported >= 1<<20 || e == p.size {
		p.reported = e
		p.c.progress(p.r, e, p.size)
	}
	if e := p.end.Load(); e-p.saved >= 8<<20 && p.tr.rec != nil {
		p.saved, p.tr.rec.Offset = e, e
		p.tr.save()
	}
	return n, err
}

func (p *progressFile) written() int64 {
	if p.slices != nil {
		p.slices.mu.Lock()
		defer p.slices.mu.Unlock()
		return p.slices.written()
	}
	return p.end.Load()
}

// fileInFolder is the rule for a local destination that names a folder, the
// CLI's: a path ending in a separator gets the object's base name, checked
// as a download of a prefix checks every name (naming.LocalPath).
func fileInFolder(src URL, dst string) (string, error) {
	if !strings.HasSuffix(dst, "/") && !strings.HasSuffix(dst, string(filepath.Separator)) {
		return dst, nil
	}
	prefix := ""
	if i := strings.LastIndex(src.Object, "/"); i >= 0 {
		prefix = src.Object[:i+1]
	}
	rel, ok, err := naming.LocalPath(dst, prefix, src.Object)
	if err != nil {
		return dst, fmt.Errorf("download: %w", err)
	}
	if !ok {
		return dst, fmt.Errorf("download: %s is a folder placeholder, with no file to write into %s", src, dst)
	}
	return filepath.Join(dst, rel), nil
}
