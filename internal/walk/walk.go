// Package walk lists the files under a directory for an upload, by one rule
// for symlinks and special files (see [List]). [Each] is the same walk as a
// stream, for trees of millions of files.
package walk

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"slices"
)

// Entry is one thing found under a directory by [List] or [Each].
type Entry struct {
	// Path is the local path to read (the root joined with Rel).
	Path string
	// Rel is the slash-separated path below the root: the object name under
	// the prefix.
	Rel string
	// Info describes the file to read; for a symlink, its target.
	Info fs.FileInfo
	// Skip, when not empty, is why the entry is not transferred
	// (a symlink to a directory, a special file).
	Skip string
	// Err, when not nil, is why the entry cannot be transferred (a broken
	// symlink); it becomes a failed result.
	Err error
	// Link says the entry is a symlink (Info, if set, is its target's).
	Link bool
}

// List lists the files under root, in lexical order, by this rule:
//
//   - regular files are listed;
//   - a symlink to a regular file is listed under the link's own name with
//     the target's content (as gsutil and gcloud do by default);
//   - a symlink to a directory is not followed (no cycles, nothing from
//     outside the tree) and is listed with Skip set;
//   - a broken symlink is listed with Err set;
//   - sockets, devices and named pipes are listed with Skip set (reading a
//     pipe could block forever);
//   - directories are descended; empty ones produce nothing (GCS has no
//     directories).
//
// The root itself may be a symlink to a directory; it is entered.
//
// A root that is missing or not a directory, or any directory that cannot be
// read, is an error returned before anything is listed, so a bulk upload
// never starts on a tree it cannot see whole.
func List(root string) ([]Entry, error) {
	var out []Entry
	if err := Each(root, func(e Entry) error { out = append(out, e); return nil }); err != nil {
		return nil, err
	}
	return out, nil
}

// Each is List as a stream: fn gets each entry as the walk reaches it,
// so memory does not grow with the tree. A directory that cannot be read is
// reported, as List's error, after the entries that could be read: a caller
// that must see the whole tree (a sync that deletes) checks the error before
// acting. An error from fn stops the walk and is returned.
func Each(root string, fn func(Entry) error) error {
	fi, err := os.Stat(root)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", root)
	}
	var dirErrs []error
	start := root
	if li, err := os.Lstat(root); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		// The root itself may be a link to a directory (the rule is about
		// links inside the tree): a trailing separator makes WalkDir enter it.
		start = root + string(filepath.Separator)
	}
	err = filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			dirErrs = append(dirErrs, err)
			return nil // WalkDir skips the unreadable directory; keep looking for more errors
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		return fn(classify(p, filepath.ToSlash(rel), d))
	})
	if err == nil && len(dirErrs) > 0 {
		err = fmt.Errorf("cannot read the whole tree under %s: %w", root, errors.Join(dirErrs...))
	}
	return err
}

// classify applies List's rule to one non-directory entry.
func classify(p, rel string, d fs.DirEntry) Entry {
	e := Entry{Path: p, Rel: rel}
	mode := d.Type()
	if mode&fs.ModeSymlink != 0 {
		e.Link = true
		target, err := os.Stat(p)
		switch {
		case err != nil:
			e.Err = fmt.Errorf("broken symlink %s: %w", p, err)
			return e
		case target.IsDir():
			e.Info, e.Skip = target, "symlink to a directory (not followed)"
			return e
		}
		e.Info, mode = target, target.Mode().Type()
	}
	if e.Info == nil {
		info, err := d.Info()
		if err != nil {
			e.Err = err
			return e
		}
		e.Info = info
	}
	if !mode.IsRegular() {
		e.Skip = "not a regular file (" + TypeName(mode) + ")"
	}
	return e
}

// TypeName names the kind of a file that is not regular: "named pipe",
// "socket", "device" or "irregular file".
func TypeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "irregular file"
}

// RemoveEmptyDirs removes the directories under dir, and dir itself, that
// hold nothing (what a move of every file under dir leaves), deepest
// first, and returns how many. A directory that still holds anything is
// kept; symlinks are not followed.
func RemoveEmptyDirs(dir string) (int, error) {
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil // an unreadable directory is not empty to us: it stays
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range slices.Backward(dirs) {
		if ents, err := os.ReadDir(d); err != nil || len(ents) > 0 {
			continue
		}
		if err := os.Remove(d); err == nil {
			n++
		}
	}
	return n, nil
}
