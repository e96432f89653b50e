package walk

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Ordered is [Each] in the order Cloud Storage lists objects: by the bytes
// of the whole slash-separated path below root, not path by path. A
// directory "a" is entered where "a/" sorts among its siblings, so "a-b"
// and "a.b" ('-' is 0x2D, '.' 0x2E) come before everything under "a/"
// ('/' is 0x2F), and "a0" after it; names are compared as the bytes of
// their UTF-8, as GCS compares object names. A sync merges this walk with
// a listing of the other side, so the two must agree exactly.
//
// Memory is one directory's entries per level of the path being walked:
// the widest directory, not the tree, bounds it. Entries follow List's rule
// (a symlink to a directory is an entry with Skip, sorted by its own name).
// A directory that cannot be read is reported after the walk, as Each does.
func Ordered(root string, fn func(Entry) error) error {
	fi, err := os.Stat(root)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", root)
	}
	w := &ordered{root: root, fn: fn}
	if err := w.dir(root, ""); err != nil {
		return err
	}
	if len(w.errs) > 0 {
		return fmt.Errorf("cannot read the whole tree under %s: %w", root, errors.Join(w.errs...))
	}
	return nil
}

type ordered struct {
	root string
	fn   func(Entry) error
	errs []error
}

// sortKey is the name a directory entry sorts by: a directory's with the
// "/" that every name under it carries.
func sortKey(d fs.DirEntry) string {
	if d.IsDir() {
		return d.Name() + "/"
	}
	return d.Name()
}

// dir walks the directory p, whose path below the root is rel ("" for the
// root, else ending in "/").
func (w *ordered) dir(p, rel string) error {
	ents, err := os.ReadDir(p)
	if err != nil {
		w.errs = append(w.errs, err)
		if len(ents) == 0 {
			return nil
		}
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(sortKey(a), sortKey(b)) })
	for i, d := range ents {
		ents[i] = nil // the walk below holds its own directory, not this one's done entries
		path := filepath.Join(p, d.Name())
		if d.IsDir() {
			if err := w.dir(path, rel+d.Name()+"/"); err != nil {
				return err
			}
			continue
		}
		if err := w.fn(classify(path, rel+d.Name(), d)); err != nil {
			return err
		}
	}
	return nil
}
