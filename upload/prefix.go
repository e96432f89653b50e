package upload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/internal/gzmeta"
	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/resumable"
)

// DownloadObjects downloads items (object → local file), Options.Parallelism
// at a time, with results in the same order; see Upload for the error and
// cancellation. Items whose local files are the same file (or whose
// temporary files are) are found before anything is fetched: the first is
// downloaded and each later one fails with an error matching ErrCollision.
// So is an item whose local file another needs as a directory ("x/f" and
// "x/f/g"): the directory wins, whatever the order of the items. An item
// whose local file is named like the files gcsput keeps beside a download
// (".NAME.gcsput-partial") is skipped, as by DownloadPrefix.
func (c *Client) DownloadObjects(ctx context.Context, items []Item, o DownloadOptions) ([]*Result, error) {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	if ctx, err = c.withKeys(ctx, o.Encryption, "DownloadOptions"); err != nil {
		return nil, err
	}
	if err := o.checkBatch(); err != nil {
		return nil, err
	}
	results := make([]*Result, len(items))
	base := func(i int) *Result {
		return &Result{Source: items[i].Remote.String(), Dest: items[i].Local, Bucket: items[i].Remote.Bucket, Object: items[i].Remote.Object}
	}
	var todo []int
	var plans []planned
	cl := newClaims()
	fail := func(i int, err error) {
		results[i] = base(i)
		results[i].Status, results[i].Err = StatusFailed, err
		c.tell(ctx, results[i])
	}
	items = slices.Clone(items)
	for i, it := range items {
		local, err := fileInFolder(it.Remote, it.Local)
		items[i].Local = local
		if err == nil && isTempFileName(local) { // as DownloadPrefix: the name of another's partial file
			results[i] = base(i)
			results[i].Dest, results[i].Status, results[i].Note = local, StatusSkipped, reservedNote
			c.tell(ctx, results[i])
			continue
		}
		abs := ""
		if err == nil {
			abs, err = filepath.Abs(local)
		}
		if err == nil {
			err = cl.claim(filepath.Dir(abs), abs, it.Remote.String())
		}
		if err != nil {
			fail(i, err)
			continue
		}
		todo = append(todo, i)
		plans = append(plans, planned{dir: filepath.Dir(abs), abs: abs, object: it.Remote.String()})
	}
	todo = notDirectories(cl, todo, plans, fail)
	done := c.forEach(ctx, len(todo), func(j int) *Result { return base(todo[j]) }, func(ctx context.Context, j int) *Result {
		r, _ := c.Download(ctx, items[todo[j]].Remote, items[todo[j]].Local, o)
		return r
	})
	for j, r := range done {
		results[todo[j]] = r
	}
	return results, batchError(ctx, results)
}

// DownloadPrefix downloads every object whose name starts with src.Object
// (treated as a folder: "photos" means "photos/") into dir, the rest of each
// name becoming the path below dir. Every write goes through an os.Root on
// dir, and a name that would land outside it ("../x", "/etc/x", or a path
// through a symlink that leaves dir) is refused with a result whose error
// matches ErrUnsafePath, never written. Folder placeholders ("a/") are
// skipped. A listing failure is an error before any download. Objects that
// map to one local file ("m/x", "m/./x", "m/z/../x", and "m/X" where the
// filesystem ignores case) are found before anything is fetched: the first
// in listing order is downloaded, each later one fails with an error
// matching ErrCollision. An object whose file another needs as a directory
// ("m/a" and "m/a/b") fails likewise: the directory wins, so every object
// under it is downloaded, and the loser never has a temporary file or a
// record. See Upload for the rest.
func (c *Client) DownloadPrefix(ctx context.Context, src URL, dir string, o DownloadOptions) ([]*Result, error) {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	if ctx, err = c.withKeys(ctx, o.Encryption, "DownloadOptions"); err != nil {
		return nil, err
	}
	if err := o.checkBatch(); err != nil {
		return nil, err
	}
	if err := validateBucket(src.Bucket); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("download: %w", err)
	}
	root, err := withFDs(ctx, func() (*os.Root, error) { return os.OpenRoot(abs) })
	if err != nil {
		return nil, fmt.Errorf("download: %w", err)
	}
	defer root.Close()
	prefix := naming.Folder(src.Object)
	objs, err := c.listAll(ctx, src.Bucket, prefix)
	if err != nil {
		return nil, err
	}
	results := make([]*Result, len(objs))
	var todo []int
	var plans []planned
	targets := make([]target, len(objs))
	cl := newClaims()
	for i, a := range objs {
		r := &Result{Source: "gs://" + a.Bucket + "/" + a.Name, Bucket: a.Bucket, Object: a.Name,
			Generation: a.Generation, Size: a.Size, Attempts: 1}
		results[i] = r
		rel, ok, err := naming.LocalPath(abs, prefix, a.Name)
		switch {
		case err != nil:
			// Refused: Dest is the directory it would have escaped, never "".
			r.Status, r.Err, r.Dest = StatusFailed, err, abs
			c.tell(ctx, r)
		case !ok:
			r.Status, r.Note = StatusSkipped, "folder placeholder"
			c.tell(ctx, r)
		case isTempFileName(rel):
			// Downloaded, .NAME.gcsput-partial would take the place of NAME's partial file.
			r.Status, r.Note, r.Dest = StatusSkipped, reservedNote, filepath.Join(abs, rel)
			c.tell(ctx, r)
		default:
			targets[i] = target{root: root, name: rel, abs: filepath.Join(abs, rel)}
			r.Dest = targets[i].abs
			if err := cl.claim(abs, r.Dest, r.Source); err != nil {
				r.Status, r.Err = StatusFailed, err
				c.tell(ctx, r)
				continue
			}
			todo = append(todo, i)
			plans = append(plans, planned{dir: abs, abs: r.Dest, object: r.Source})
		}
	}
	todo = notDirectories(cl, todo, plans, func(i int, err error) {
		results[i].Status, results[i].Err = StatusFailed, err
		c.tell(ctx, results[i])
	})
	var bytes int64
	for _, i := range todo {
		bytes += objs[i].Size
	}
	c.meter.announce(len(todo), bytes)
	done := c.forEach(context.WithValue(ctx, countedKey{}, true), len(todo), func(j int) *Result { return results[todo[j]] }, func(ctx context.Context, j int) *Result {
		i := todo[j]
		return c.downloadObject(ctx, results[i], objs[i], targets[i], o)
	})
	for j, r := range done {
		results[todo[j]] = r
	}
	return results, batchError(ctx, results)
}

// notDirectories fails (fail) each of todo whose local file another needs
// as a directory, plans[j] being todo[j]'s, and returns the others: see
// claims.directories.
func notDirectories(cl *claims, todo []int, plans []planned, fail func(i int, err error)) []int {
	keep := todo[:0]
	for j, err := range cl.directories(plans) {
		if err != nil {
			fail(todo[j], err)
			continue
		}
		keep = append(keep, todo[j])
	}
	return keep
}

// listAll lists the objects under prefix, all of them, before a download
// starts: a listing that fails downloads nothing.
func (c *Client) listAll(ctx context.Context, bucket, prefix string) ([]*storage.ObjectAttrs, error) {
	var objs []*storage.ObjectAttrs
	for a, err := range c.List(ctx, bucket, prefix, "") {
		if err != nil {
			return nil, fmt.Errorf("download: listing gs://%s/%s: %w", bucket, prefix, err)
		}
		objs = append(objs, a)
	}
	return objs, nil
}

// downloadObject runs one download of a listed object.
func (c *Client) downloadObject(ctx context.Context, r *Result, a *storage.ObjectAttrs, t target, o DownloadOptions) *Result {
	start := time.Now()
	err := c.hold(ctx, func() error { return c.downloadTo(ctx, r, URL{Bucket: a.Bucket, Object: a.Name}, a, t, o) })
	r.Elapsed = time.Since(start)
	c.finish(ctx, r, err)
	return r
}

// DownloadWriter streams the object src to w (stdout, a pipe), in order: the
// counterpart of UploadReader, as the official client's ObjectHandle.NewReader
// copied to w. A broken response is resumed with a Range request from the
// bytes already written. The CRC32C of all the bytes is checked at the end;
// since w already has them by then, a mismatch can only be reported (Err
// matches resumable.ErrChecksumMismatch): never treat the output as good
// unless the error is nil. Nothing is saved for another process.
// Result.Dest is "-".
//
// Of o, Decompress and Generation apply. With Decompress, an object stored
// with Content-Encoding: gzip is written decompressed, as it arrives, while
// its stored bytes are checked against the object's CRC32C (without it, it
// arrives as stored). To know the encoding before the first byte, it costs
// a metadata request first, and the download is pinned to the generation it
// read. A stored stream that does not decompress is an error matching
// ErrNotGzip, reported, like a checksum mismatch, after w got what
// decompressed.
func (c *Client) DownloadWriter(ctx context.Context, src URL, w io.Writer, o DownloadOptions) (*Result, error) {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return failedResult(src.String(), "-", err), err
	}
	defer leave()
	if ctx, err = c.withKeys(ctx, o.Encryption, "DownloadOptions"); err != nil {
		return failedResult(src.String(), "-", err), err
	}
	start := time.Now()
	r := &Result{Source: src.String(), Dest: "-", Bucket: src.Bucket, Object: src.Object, Attempts: 1}
	err = c.hold(ctx, func() error { return c.downloadStream(ctx, r, src, w, o) })
	r.Elapsed = time.Since(start)
	c.finish(ctx, r, err)
	return r, r.Err
}

func (c *Client) downloadStream(ctx context.Context, r *Result, src URL, w io.Writer, o DownloadOptions) error {
	if err := checkDest(src); err != nil {
		return err
	}
	spec := resumable.DownloadSpec{Bucket: src.Bucket, Object: src.Object, Generation: o.Generation}
	var gz *gunzipWriter
	if o.Decompress || c.hasKeys(ctx) {
		var attrs *storage.ObjectAttrs
		var err error
		if o.Generation != 0 {
			attrs, err = c.statGeneration(ctx, src, o.Generation)
		} else {
			attrs, err = c.Stat(ctx, src)
		}
		if err != nil {
			return fmt.Errorf("download: %s: %w", src, err)
		}
		if spec.Key, err = c.readKey(ctx, attrs); err != nil {
			return fmt.Errorf("download: %w", err)
		}
		spec.Generation = attrs.Generation
		if o.Decompress && gzmeta.IsGzip(attrs.ContentEncoding) {
			gz = newGunzipWriter(countWriter{w, &r.Decompressed})
			w = gz
		}
	}
	tr := c.newTracker(r, src)
	rc, err := c.resumable(func(e resumable.Event) {
		if e.Kind == resumable.EventProgress {
			c.progress(r, e.Persisted, e.Size)
		}
		tr.onEvent(e)
	})
	if err != nil {
		return err
	}
	res, err := rc.Download(ctx, spec, w)
	if gz != nil {
		var zerr error
		if err != nil {
			zerr = gz.abort()
		} else {
			zerr = gz.Close()
		}
		switch {
		case err == nil && errors.Is(zerr, ErrNotGzip):
			return fmt.Errorf("download: %s is stored with Content-Encoding: gzip, but %w "+
				"(the stored bytes match the object's CRC32C: the object itself is damaged, upload it again)", src, zerr)
		case err == nil && zerr != nil:
			return fmt.Errorf("download: %s: writing the decompressed content: %w", src, zerr)
		}
	}
	if re := (*resumable.Error)(nil); errors.As(err, &re) && re.Offset == 0 && isStatus(err, http.StatusNotFound) {
		return errMissing(src)
	}
	if err != nil {
		return fmt.Errorf("download: %s: %w", src, err)
	}
	r.Status, r.Generation, r.Size, r.CRC32C = StatusDownloaded, res.Generation, res.Size, res.Hashes.CRC32C
	return nil
}

// countWriter counts the bytes written through it into *n.
type countWriter struct {
	w io.Writer
	n *int64
}

func (c countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	*c.n += int64(n)
	return n, err
}
