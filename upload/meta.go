package upload

import (
	"fmt"
	"io/fs"
	"mime"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Custom metadata keys for POSIX attributes: the ones gsutil and gcloud
// write (and read back on download) with --preserve-posix.
const (
	// MetaMTime holds the modification time, in whole seconds since the Unix
	// epoch, as a decimal string.
	MetaMTime = "goog-reserved-file-mtime"
	// MetaMode holds the permission bits as three octal digits ("644").
	MetaMode = "goog-reserved-posix-mode"
)

// Attrs is the object metadata an upload sets. The zero value uploads with a
// content type guessed from the name and no other metadata.
type Attrs struct {
	// ContentType is the MIME type. Empty: guessed from the object name's
	// extension (ContentTypeFor).
	ContentType string `json:"content_type,omitempty"`
	// CacheControl, ContentDisposition, ContentEncoding and ContentLanguage
	// are stored as given and served as the matching response headers.
	CacheControl       string `json:"cache_control,omitempty"`
	ContentDisposition string `json:"content_disposition,omitempty"`
	ContentEncoding    string `json:"content_encoding,omitempty"`
	ContentLanguage    string `json:"content_language,omitempty"`
	// Metadata is custom key/value metadata (x-goog-meta-*). A key whose
	// value is "" is left out, as Client.Update deletes such a key: "" means
	// "no such key" everywhere.
	Metadata map[string]string `json:"metadata,omitempty"`
	// StorageClass (e.g. "NEARLINE") and KMSKeyName override the bucket's
	// defaults when set.
	StorageClass string `json:"storage_class,omitempty"`
	KMSKeyName   string `json:"kms_key_name,omitempty"`
}

// withDefaults returns a copy with the content type filled in for object and,
// when fi is not nil, the POSIX attributes added to Metadata.
func (a Attrs) withDefaults(object string, fi fs.FileInfo) Attrs {
	if a.ContentType == "" {
		a.ContentType = ContentTypeFor(object)
	}
	if fi != nil {
		md := make(map[string]string, len(a.Metadata)+2)
		for k, v := range a.Metadata {
			md[k] = v
		}
		for k, v := range POSIXMetadata(fi) {
			md[k] = v
		}
		a.Metadata = md
	}
	return a
}

// ContentTypeFor guesses a MIME type from a name's extension (Go's mime
// table, extended by the system's), or returns "application/octet-stream".
func ContentTypeFor(name string) string {
	if ext := path.Ext(name); ext != "" {
		if t := mime.TypeByExtension(strings.ToLower(ext)); t != "" {
			return t
		}
	}
	return "application/octet-stream"
}

// POSIXMetadata returns the mtime and mode of fi under gcloud's keys.
func POSIXMetadata(fi fs.FileInfo) map[string]string {
	return map[string]string{
		MetaMTime: strconv.FormatInt(fi.ModTime().Unix(), 10),
		MetaMode:  fmt.Sprintf("%03o", fi.Mode().Perm()),
	}
}

// RestorePOSIX sets a downloaded file's modification time and permission
// bits from the object's metadata, when they are there and valid. Invalid
// values are ignored, as gsutil does, rather than failing the download.
func RestorePOSIX(path string, md map[string]string) error {
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer root.Close()
	return restorePOSIX(root, filepath.Base(path), md)
}

func restorePOSIX(root *os.Root, name string, md map[string]string) error {
	if m, ok := parseMode(md[MetaMode]); ok {
		if err := root.Chmod(name, m); err != nil {
			return err
		}
	}
	if t, ok := parseMTime(md[MetaMTime]); ok {
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

// nonEmpty is m without its empty values (nil when none is left): on a new
// object, "" means the key is absent, as it does in Update.
func nonEmpty(m map[string]string) map[string]string {
	var out map[string]string
	for k, v := range m {
		if v == "" {
			continue
		}
		if out == nil {
			out = make(map[string]string, len(m))
		}
		out[k] = v
	}
	return out
}
