// Package posix keeps a file's modification time and permission bits in an
// object's custom metadata, under the keys gsutil and gcloud use with
// --preserve-posix, and puts them back on a downloaded file.
package posix

import (
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"
)

// The custom metadata keys gsutil and gcloud write (and read back on
// download) with --preserve-posix.
const (
	// MTimeKey holds the modification time, in whole seconds since the Unix
	// epoch, as a decimal string.
	MTimeKey = "goog-reserved-file-mtime"
	// ModeKey holds the permission bits as three octal digits ("644").
	ModeKey = "goog-reserved-posix-mode"
)

// Metadata returns the mtime and mode of fi under gcloud's keys.
func Metadata(fi fs.FileInfo) map[string]string {
	return map[string]string{
		MTimeKey: strconv.FormatInt(fi.ModTime().Unix(), 10),
		ModeKey:  fmt.Sprintf("%03o", fi.Mode().Perm()),
	}
}

// Restore sets the modification time and permission bits of the file name
// below root from an object's metadata, when they are there and valid.
// Invalid values are ignored, as gsutil does, rather than failing the
// download.
func Restore(root *os.Root, name string, md map[string]string) error {
	if m, ok := parseMode(md[ModeKey]); ok {
		if err := root.Chmod(name, m); err != nil {
			return err
		}
	}
	if t, ok := parseMTime(md[MTimeKey]); ok {
		if err := root.Chtimes(name, time.Time{}, t); err != nil {
			return err
		}
	}
	return nil
}

func parseMode(s string) (fs.FileMode, bool) {
	if len(s) != 3 {
		return 0, false
	}
	m, err := strconv.ParseUint(s, 8, 32)
	return fs.FileMode(m), err == nil
}

func parseMTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, false
	}
	return time.Unix(n, 0), true
}
