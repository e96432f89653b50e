// Package naming turns local paths into object names and back, by the rules
// gcsput's uploads and downloads share: a file below a directory uploaded
// under a prefix is named [ObjectName]; an object listed under a prefix is
// written at [LocalPath], which refuses any name that would land outside the
// destination. [IsURL] tells an operand that means Cloud Storage from a local
// path ([IsRemote] one spelt right), [Folder] makes a name a folder, and [ContentType] guesses a MIME type from a name.
package naming

import (
	"errors"
	"fmt"
	"mime"
	"path"
	"path/filepath"
	"strings"
)

// ObjectName returns the object name for a file at rel (slash-separated)
// below a directory uploaded under prefix. A prefix that does not end in "/"
// is treated as a folder all the same: ("backup", "a/b.txt") → "backup/a/b.txt".
func ObjectName(prefix, rel string) string {
	if prefix == "" {
		return rel
	}
	return strings.TrimSuffix(prefix, "/") + "/" + rel
}

// ErrUnsafePath is matched (errors.Is) by the error for an object whose name
// would place a downloaded file outside the destination directory.
var ErrUnsafePath = errors.New("unsafe local path")

// UnsafePathError names the object and the directory it would escape; it
// matches ErrUnsafePath.
type UnsafePathError struct {
	Object string
	Dir    string
	Reason string
}

func (e *UnsafePathError) Error() string {
	return fmt.Sprintf("refusing to download object %q: %s, so it would be written outside %s", e.Object, e.Reason, e.Dir)
}

// Is makes errors.Is(err, ErrUnsafePath) true.
func (e *UnsafePathError) Is(target error) bool { return target == ErrUnsafePath }

// LocalPath returns the relative local path (OS separators) at which object,
// listed under prefix, is written below a destination directory dir. The
// prefix is treated as a folder (see ObjectName). It refuses names that are
// absolute, climb out with "..", contain a NUL, or (on Windows) use "\" or a
// drive or reserved name; ok=false with a nil error means the object is a
// folder placeholder ("dir/") with nothing to write.
func LocalPath(dir, prefix, object string) (rel string, ok bool, err error) {
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	r, found := strings.CutPrefix(object, prefix)
	if !found {
		return "", false, &UnsafePathError{Object: object, Dir: dir, Reason: "its name is not under the prefix " + prefix}
	}
	if r == "" || strings.HasSuffix(r, "/") {
		return "", false, nil
	}
	unsafe := func(reason string) (string, bool, error) {
		return "", false, &UnsafePathError{Object: object, Dir: dir, Reason: reason}
	}
	switch {
	case strings.ContainsRune(r, 0):
		return unsafe("its name contains a NUL byte")
	case strings.HasPrefix(r, "/"):
		return unsafe("its name is an absolute path")
	case filepath.Separator == '\\' && strings.ContainsAny(r, `\:`):
		return unsafe(`its name contains "\" or ":"`)
	}
	local := filepath.FromSlash(r)
	if !filepath.IsLocal(local) {
		if path.IsAbs(r) || filepath.IsAbs(local) || filepath.VolumeName(local) != "" {
			return unsafe("its name is an absolute path")
		}
		return unsafe(`its name climbs out with ".."`)
	}
	if local = filepath.Clean(local); local == "." {
		return unsafe("its name is the destination directory itself")
	}
	return local, true, nil
}

// IsURL reports whether s is meant as a Cloud Storage URL rather than a local
// path: it starts with "gs://", or with a near miss of it ("gs:/", "gs:",
// "gcs://", "GS://") that upload.ParseURL reports as a typo.
func IsURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "gs:") || strings.HasPrefix(l, "gcs://")
}

// IsRemote reports whether an operand names Cloud Storage: it starts with
// "gs://". Anything else is a local path or "-" (a near miss is IsURL's).
func IsRemote(op string) bool { return strings.HasPrefix(op, "gs://") }

// AllRemote reports whether every operand names Cloud Storage, as the
// sources of a copy between gs:// locations do.
func AllRemote(ops []string) bool {
	for _, op := range ops {
		if !IsRemote(op) {
			return false
		}
	}
	return true
}

// Folder is an object name as a folder: "" (the bucket) stays "", any other
// name ends in "/".
func Folder(name string) string {
	if name != "" && !strings.HasSuffix(name, "/") {
		return name + "/"
	}
	return name
}

// ContentType guesses a MIME type from a name's extension (Go's mime
// table, extended by the system's), or returns "application/octet-stream".
func ContentType(name string) string {
	if ext := path.Ext(name); ext != "" {
		if t := mime.TypeByExtension(strings.ToLower(ext)); t != "" {
			return t
		}
	}
	return "application/octet-stream"
}
