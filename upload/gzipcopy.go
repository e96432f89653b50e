package upload

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gcsput/gcsput/internal/gzmeta"
)

// gzipRule is -z EXT,... or -Z: which uploaded files are stored gzipped, with
// Content-Encoding: gzip (downloads fetch the stored bytes, check them against the
// object's CRC32C, then decompress them, as gsutil does).
type gzipRule struct {
	all  bool
	exts map[string]bool // lower case, without the dot
}

func parseGzipRule(exts []string, all bool) gzipRule {
	r := gzipRule{all: all, exts: map[string]bool{}}
	for _, e := range exts {
		if e = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(e), ".")); e != "" {
			r.exts[e] = true
		}
	}
	return r
}

func (r gzipRule) matches(path string) bool {
	return r.all || r.exts[strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))]
}

func (r gzipRule) active() bool { return r.all || len(r.exts) > 0 }

// gzipped compresses src into dir, at a path named from src's absolute path,
// and returns it with the size and CRC32C of src's bytes (the content the
// object will hold once decompressed). A compressed copy of src's current
// bytes (see cachedCopy) is reused, so a rerun after a kill finds the same
// file, and its saved session resumes. The compressed bytes are what is uploaded: their CRC32C is the
// stored object's, checked like any upload's. The copy takes src's
// modification time and permission bits, which -P stores.
func gzipped(src, dir string) (out string, size int64, crc uint32, err error) {
	abs, err := filepath.Abs(src)
	if err != nil {
		return "", 0, 0, err
	}
	sum := sha256.Sum256([]byte(abs))
	out = filepath.Join(dir, hex.EncodeToString(sum[:12])+".gz")
	si, err := os.Stat(src)
	if err != nil {
		return "", 0, 0, err
	}
	if oi, err := os.Stat(out); err == nil && oi.ModTime().Equal(si.ModTime()) { // -P stores the copy's
		if size, crc, ok, err := cachedCopy(out, src); err != nil || ok {
			return out, size, crc, err
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", 0, 0, err
	}
	tmp, err := os.CreateTemp(dir, ".gz-*")
	if err != nil {
		return "", 0, 0, err
	}
	defer os.Remove(tmp.Name())
	size, crc, err = compress(src, tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), si.Mode().Perm())
	}
	if err == nil {
		err = os.Chtimes(tmp.Name(), time.Time{}, si.ModTime())
	}
	if err != nil {
		return "", 0, 0, fmt.Errorf("compressing %s: %w", src, err)
	}
	return out, size, crc, os.Rename(tmp.Name(), out)
}

// compress writes src gzip-compressed to w and returns the size and CRC32C
// of what it read.
func compress(src string, w io.Writer) (int64, uint32, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, 0, err
	}
	defer in.Close()
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	zw := gzip.NewWriter(w)
	n, err := io.Copy(zw, io.TeeReader(in, h))
	if err != nil {
		return 0, 0, err
	}
	return n, h.Sum32(), zw.Close()
}

// cachedCopy reports whether gz, a compressed copy left by an earlier run, is
// of src's current bytes, and returns their size and CRC32C. A modification
// time proves nothing (a file rewritten and touched back keeps it), so src is
// read once and checked against the gzip trailer gz ends with: the CRC-32
// (IEEE) and the length mod 2^32 of what was compressed. A copy that does not
// match is made again.
func cachedCopy(gz, src string) (size int64, crc uint32, ok bool, err error) {
	trailer, err := gzipTrailer(gz)
	if err != nil {
		return 0, 0, false, nil // none, or unreadable: compress again
	}
	in, err := os.Open(src)
	if err != nil {
		return 0, 0, false, err
	}
	defer in.Close()
	c, ieee := crc32.New(crc32.MakeTable(crc32.Castagnoli)), crc32.NewIEEE()
	size, err = io.Copy(io.MultiWriter(c, ieee), in)
	if err != nil {
		return 0, 0, false, fmt.Errorf("%s: %w", src, err)
	}
	ok = binary.LittleEndian.Uint32(trailer[:4]) == ieee.Sum32() && binary.LittleEndian.Uint32(trailer[4:]) == uint32(size)
	return size, c.Sum32(), ok, nil
}

// gzipTrailer returns the last 8 bytes of the gzip file path.
func gzipTrailer(path string) ([8]byte, error) {
	var t [8]byte
	f, err := os.Open(path)
	if err != nil {
		return t, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() < 18 { // a gzip member's header and trailer
		return t, fmt.Errorf("%s: not a gzip file", path)
	}
	_, err = f.ReadAt(t[:], fi.Size()-8)
	return t, err
}

// uploadGzipped uploads the items the rule takes as gzip-compressed copies
// (Content-Encoding: gzip, the content type of the original name), each
// result naming its original path, and returns the items left to upload
// plainly. The copies are kept in the state directory's gzip/ until their
// upload succeeded, so a rerun resumes them; without a state directory they
// are made in a private temporary directory, removed when the call ends.
func (c *Client) uploadGzipped(ctx context.Context, h *callHook, items []Item, rule gzipRule, o UploadOptions) []Item {
	if !rule.active() {
		return items
	}
	dir := c.opts.StateDir
	var scratchErr error
	if c.opts.NoState || dir == "" {
		// No state to resume from: a scratch directory of this call's own
		// (0700, a fresh name), never a shared place where another user
		// could plant a "copy" that would be reused and uploaded.
		if dir, scratchErr = os.MkdirTemp("", "gcsput-gzip-*"); scratchErr == nil {
			defer os.RemoveAll(dir)
		}
	}
	dir = filepath.Join(dir, "gzip")
	var plain, zipped []Item
	for _, it := range items {
		if !rule.matches(it.Local) {
			plain = append(plain, it)
			continue
		}
		gz, size, crc, err := "", int64(0), uint32(0), scratchErr
		if err == nil {
			gz, size, crc, err = gzipped(it.Local, dir)
		}
		if err != nil {
			c.tell(ctx, &Result{Source: it.Local, Dest: it.Remote.String(), Status: StatusFailed, Err: err})
			continue
		}
		h.mu.Lock()
		h.originals[gz] = it.Local
		h.mu.Unlock()
		c.shown.Store(gz, it.Local)
		defer c.shown.Delete(gz)
		// The content's size and CRC32C go with the object: sync and
		// SkipUnchanged compare a local file with them, as the object's own
		// describe the gzip bytes.
		zipped = append(zipped, Item{Local: gz, Remote: it.Remote, Metadata: gzmeta.DecodedMetadata(size, crc)})
	}
	if len(zipped) > 0 {
		zo := o
		zo.Attrs.ContentEncoding = "gzip"
		results, _ := c.Upload(ctx, zipped, zo)
		for i, r := range results { // in the order of zipped
			if r.OK() {
				os.Remove(zipped[i].Local) // the compressed copy, done with; never the user's file
			}
		}
	}
	return plain
}
