package upload

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/gcsput/gcsput/internal/state"
)

// localCRC is the CRC32C of a local file, for a comparison (sync in both
// directions, SkipUnchanged): every such checksum goes through the
// checksum cache (internal/sumcache) of the state directory, which saves it
// with the file's identity so that an unchanged file costs a stat, not a
// read. f is the file open, or nil to open path on a miss. Without a state
// directory, or with Options.NoChecksumCache, the file is read every time.
func (c *Client) localCRC(path string, f *os.File) (uint32, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return c.sums.Sum(path, f, wholeFileCRC)
}

// wholeFileCRC checksums f, whose stat says size bytes, and makes sure
// that is all of it: a file that reads past its size (one still growing,
// or one of /proc, which stat calls empty) or fails there (/proc/self/mem:
// EIO) is an error naming it, never the CRC32C of its first size bytes,
// which would pass it as unchanged.
func wholeFileCRC(f *os.File, size int64) (uint32, error) {
	crc, err := fileCRC32C(f, size)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", f.Name(), err)
	}
	var b [1]byte
	switch n, err := f.ReadAt(b[:], size); {
	case n > 0:
		return 0, fmt.Errorf("%s: reads past its size of %d bytes (still being written, or not a plain file): sync it when it is still", f.Name(), size)
	case err != nil && !errors.Is(err, io.EOF):
		return 0, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return crc, nil
}

// uploadedSum saves the CRC32C of a file this process just read whole and
// uploaded (the object's, checked end to end), when the file is still the
// one opened: the next sync compares it without reading it again. A
// resumed upload's first bytes were read by an earlier process, so its
// CRC32C is not saved. opened is the cache's time before the file was
// opened (the racy rule).
func (c *Client) uploadedSum(r *Result, abs string, fi os.FileInfo, opened time.Time) {
	if c.sums == nil || r.Status != StatusUploaded && r.Status != StatusRestarted || r.Size != fi.Size() {
		return
	}
	now, err := os.Stat(abs)
	if err != nil || state.FingerprintOf(abs, fi).Change(state.FingerprintOf(abs, now)) != "" {
		return
	}
	c.sums.Add(abs, fi, r.CRC32C, opened)
}

// flushSums saves what this run read and used to the checksum cache; a
// failure costs the next run reads, and is a warning.
func (c *Client) flushSums() {
	if err := c.sums.Flush(); err != nil {
		c.warn(err.Error())
	}
}
