package upload

import (
	"compress/gzip"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/internal/gzmeta"
	"github.com/gcsput/gcsput/resumable"
)

// Objects stored with Content-Encoding: gzip (gsutil's and gcsput's -z, -Z)
// hold compressed bytes, and GCS's CRC32C and size describe those. With
// DownloadOptions.Decompress a download asks for the stored bytes
// ("Accept-Encoding: gzip", so GCS never transcodes them), writes them to the
// partial file, resumes it like any other and checks them against the
// object's CRC32C; only then are they decompressed, into a second temporary
// file beside the target (".NAME.gcsput-gunzip"), which is renamed over the
// target. gsutil does the same (it downloads to a ".gztmp" file, checks the
// hash, then decompresses).

// gunzipSuffix marks the temporary file a decompressing download writes its
// decompressed bytes to, beside its target: ".NAME.gcsput-gunzip".
const gunzipSuffix = ".gcsput-gunzip"

// ErrNotGzip marks a download of an object stored with Content-Encoding:
// gzip whose stored bytes, though they match the object's CRC32C, are not a
// valid gzip stream: the object itself is damaged, and fetching it again
// would not help.
var ErrNotGzip = errors.New("its stored bytes are not a valid gzip stream")

// ErrDecodedMismatch marks a download of an object stored gzip-encoded whose
// stored bytes match the object's CRC32C and decompress, but not into the
// content its gcsput-decoded-size and gcsput-decoded-crc32c describe: the
// object does not hold what it says, and fetching it again would not help.
var ErrDecodedMismatch = errors.New("its content does not match its gcsput-decoded-size and gcsput-decoded-crc32c")

// checkDecoded compares content decompressed from an object (n bytes whose
// CRC32C is crc) with the DecodedMetadata the object carries, if it does.
func checkDecoded(attrs *storage.ObjectAttrs, n int64, crc uint32) error {
	if attrs == nil || attrs.Metadata[gzmeta.DecodedSizeKey] == "" && attrs.Metadata[gzmeta.DecodedCRC32CKey] == "" {
		return nil // another tool's gzip object: its gzip trailer was the check
	}
	size, want, ok := gzmeta.Decoded(attrs)
	if !ok || size != n || want != crc {
		return fmt.Errorf("%w (%d bytes with CRC32C %s; it says %s bytes with %s)", ErrDecodedMismatch,
			n, resumable.EncodeCRC32C(crc), attrs.Metadata[gzmeta.DecodedSizeKey], attrs.Metadata[gzmeta.DecodedCRC32CKey])
	}
	return nil
}

func gunzipPath(name string) string {
	return filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+gunzipSuffix)
}

// gunzipCommit decompresses the verified partial file f into t's gunzip
// file and renames that over the target; the partial is removed after.
// It returns the decompressed size. Nothing is written at the target's path
// unless the whole stream decompressed, its gzip trailers (CRC-32 and
// length) included, and, for an object whose attrs carry DecodedMetadata,
// the content matches them.
func gunzipCommit(f *os.File, t target, src URL, attrs *storage.ObjectAttrs) (int64, error) {
	name := gunzipPath(t.name)
	out, err := createFresh(t.root, name)
	if err != nil {
		return 0, escaped(src.Object, t, err)
	}
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	n, err := gunzipInto(io.MultiWriter(out, h), io.NewSectionReader(f, 0, 1<<62))
	if err == nil {
		err = checkDecoded(attrs, n, h.Sum32())
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.root.Remove(name)
		if errors.Is(err, ErrDecodedMismatch) {
			f.Close()
			t.root.Remove(t.temp())
			return 0, fmt.Errorf("download: %s is stored with Content-Encoding: gzip, but %w; nothing was written to %s "+
				"(the object does not hold what it says: upload it again)", src, err, t.abs)
		}
		if errors.Is(err, ErrNotGzip) {
			f.Close()
			t.root.Remove(t.temp()) // the stored bytes are what they are: no use resuming them
			return 0, fmt.Errorf("download: %s is stored with Content-Encoding: gzip, but %w; nothing was written to %s "+
				"(the stored bytes match the object's CRC32C: the object itself is damaged, upload it again)", src, err, t.abs)
		}
		return 0, fmt.Errorf("download: decompressing %s into %s: %w", src, gunzipPath(t.abs), err)
	}
	if err := t.root.Rename(name, t.name); err != nil {
		t.root.Remove(name)
		return 0, fmt.Errorf("download: %w", err)
	}
	f.Close()
	t.root.Remove(t.temp())
	if d, err := t.root.Open(filepath.Dir(t.name)); err == nil {
		d.Sync()
		d.Close()
	}
	return n, nil
}

// place puts the verified partial file f at the target: renamed as it is,
// or, for an object stored gzip-encoded when o.Decompress asks, decompressed
// into another temporary file that is renamed instead (see gunzipCommit).
// A failure to decompress other than a damaged stream (a full disk) keeps
// the partial file, and its record, for the next run; a damaged stream
// removes it.
func (c *Client) place(f *os.File, t target, src URL, attrs *storage.ObjectAttrs, res *resumable.DownloadResult, o DownloadOptions, r *Result) error {
	gz := gzmeta.IsGzip(res.ContentEncoding) || attrs != nil && gzmeta.IsGzip(attrs.ContentEncoding)
	if !o.Decompress || !gz || res.Transcoded {
		return commit(f, t)
	}
	n, err := gunzipCommit(f, t, src, attrs)
	r.Decompressed = n
	return err
}

// createFresh creates name below root for writing, replacing a regular file
// left there by a run that died while decompressing; O_EXCL never follows a
// link.
func createFresh(root *os.Root, name string) (*os.File, error) {
	if fi, err := root.Lstat(name); err == nil {
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: %w", name, errTempLink)
		}
		if err := root.Remove(name); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
}

// gunzipInto writes the decompressed stream of r to w and returns its
// length. A stream that is not gzip, is cut short or fails its trailer's
// check is an error matching ErrNotGzip; w's own errors are returned as
// they are.
func gunzipInto(w io.Writer, r io.Reader) (int64, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return 0, notGzip(err)
	}
	defer zr.Close()
	n, err := io.Copy(writerOnly{w}, zr)
	var we writeError
	switch {
	case errors.As(err, &we):
		return n, we.err
	case err != nil:
		return n, notGzip(err)
	}
	return n, nil
}

func notGzip(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF // an empty or truncated stream
	}
	return fmt.Errorf("%w: %w", ErrNotGzip, err)
}

// writerOnly tells the destination's errors from the decompressor's.
type writerOnly struct{ w io.Writer }

type writeError struct{ err error }

func (e writeError) Error() string { return e.err.Error() }

func (w writerOnly) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil {
		return n, writeError{err}
	}
	return n, nil
}

// gunzipWriter decompresses what is written to it into w, as it arrives:
// a stream download's destination (stdout) that gets the content, not the
// stored bytes. A stream that stops decompressing is still read to its end,
// so that the stored bytes are checked against the object's CRC32C: damage
// on the way is reported as a checksum mismatch, a damaged object as
// ErrNotGzip (by Close). Only w's own errors stop the download.
type gunzipWriter struct {
	pw   *io.PipeWriter
	done chan error
}

// errAborted ends the decompression of a download that failed.
var errAborted = errors.New("download failed")

func newGunzipWriter(w io.Writer) *gunzipWriter {
	pr, pw := io.Pipe()
	g := &gunzipWriter{pw: pw, done: make(chan error, 1)}
	go func() {
		_, err := gunzipInto(w, pr)
		if err == nil || errors.Is(err, ErrNotGzip) {
			io.Copy(io.Discard, pr) // the rest, for the CRC32C check; gzip reads to the end anyway
		}
		pr.CloseWithError(err) // w failed: the download's next Write returns it
		g.done <- err
	}()
	return g
}

func (g *gunzipWriter) Write(p []byte) (int, error) { return g.pw.Write(p) }

// Close ends the stored stream and waits for its last decompressed bytes.
func (g *gunzipWriter) Close() error {
	g.pw.Close()
	return <-g.done
}

// abort stops the decompression after a failed download, and returns what
// the decompression had met before: a damaged stream, or w's error.
func (g *gunzipWriter) abort() error {
	g.pw.CloseWithError(errAborted)
	if err := <-g.done; !errors.Is(err, errAborted) {
		return err
	}
	return nil
}
