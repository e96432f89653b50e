package upload

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrCollision is matched (errors.Is) by the error of a download whose
// object maps to the same local file as another object of the same batch,
// or to its temporary file; see [Client.DownloadPrefix].
var ErrCollision = errors.New("two objects map to one local file")

// collisionError is the error of a download whose object maps to the same
// local file as another object of the same batch ("m/x", "m/./x",
// "m/z/../x", and "m/X" on a case-insensitive filesystem), or to the
// temporary file of another download. The first object in listing order is
// downloaded; every later one fails with this error, and nothing is written
// for it. It matches ErrCollision.
//
// Objects of which one needs the other's local file as a directory ("m/a"
// and "m/a/b") collide too, whatever their order: the directory wins, the
// file fails (Dir is set). An operator downloading a tree expects the tree:
// every object under "m/a/" can be written, "m/a" cannot be a file there,
// and failing it costs one object rather than all those under it. cp -r
// decides the same way for a name given on the command line that is both
// an object and a folder.
type collisionError struct {
	Object string // the object that was not downloaded
	Other  string // the object that claimed the path first, or (Dir) one that needs it as a directory
	Path   string // the local file both map to
	Dir    bool   // Other needs Path as a directory
}

func (e *collisionError) Error() string {
	if e.Dir {
		return fmt.Sprintf("download: %s and %s need the local path %s as a file and as a directory; the directory wins (it holds %s and anything else under %s/), so %s was not downloaded: download it on its own to another file, or rename one",
			e.Object, e.Other, e.Path, e.Other, e.Object, e.Object)
	}
	return fmt.Sprintf("download: %s and %s both map to the local file %s; %s was not downloaded: download them into separate directories, or rename one",
		e.Object, e.Other, e.Path, e.Object)
}

// Is makes errors.Is(err, ErrCollision) true.
func (e *collisionError) Is(target error) bool { return target == ErrCollision }

// claims assigns local files to the downloads of one batch, so that two
// transfers never share a file or a temporary file.
type claims struct {
	owner map[string]string // key of a local path → gs:// URL of the object that claimed it
	fold  map[string]bool   // directory → whether its filesystem ignores case
}

func newClaims() *claims { return &claims{owner: map[string]string{}, fold: map[string]bool{}} }

// claim reserves the target file abs and its temporary file for object, or
// returns a *collisionError naming the object that holds either. dir is the
// destination directory whose filesystem decides how names compare.
func (c *claims) claim(dir, abs, object string) error {
	keys := []string{c.key(dir, abs), c.key(dir, tempPath(abs))}
	for _, k := range keys {
		if other, ok := c.owner[k]; ok {
			return &collisionError{Object: object, Other: other, Path: abs}
		}
	}
	for _, k := range keys {
		c.owner[k] = object
	}
	return nil
}

// planned is a local file claimed for an object of the batch.
type planned struct {
	dir, abs, object string // as given to claim
}

// directories returns, for each of files (claimed already), the error that
// it is needed as a directory by another of them ("a" and "a/b"), or nil.
// It is decided from the whole batch before any download starts, so the
// outcome never depends on which download finishes first, and the loser
// never leaves a temporary file behind.
func (c *claims) directories(files []planned) []error {
	needs := map[string]string{} // key of a directory → the first object below it
	for _, f := range files {
		for p := filepath.Dir(f.abs); ; p = filepath.Dir(p) {
			k := c.key(f.dir, p)
			if _, seen := needs[k]; seen || filepath.Dir(p) == p {
				break // its parents are recorded already, or it is the root
			}
			needs[k] = f.object
		}
	}
	errs := make([]error, len(files))
	for i, f := range files {
		if other, ok := needs[c.key(f.dir, f.abs)]; ok {
			errs[i] = &collisionError{Object: f.object, Other: other, Path: f.abs, Dir: true}
		}
	}
	return errs
}

func (c *claims) key(dir, abs string) string {
	k := filepath.Clean(abs)
	fold, ok := c.fold[dir]
	if !ok {
		fold = caseInsensitive(dir)
		c.fold[dir] = fold
	}
	if fold {
		k = strings.ToLower(k)
	}
	return k
}

// tempPath is the temporary file a download of abs writes first.
func tempPath(abs string) string {
	return filepath.Join(filepath.Dir(abs), "."+filepath.Base(abs)+partialSuffix)
}

// caseProbePrefix and caseProbeSuffix frame the name of the probe file
// caseInsensitive creates, and removes, in a destination directory.
const caseProbePrefix, caseProbeSuffix = ".gcsput-case-", "-Aa"

// reservedNote is why a prefix download skips an object named like a file
// gcsput writes beside a download (see [isTempFileName]): downloaded, it would
// take the place of, or collide with, the partial file of the object it names.
const reservedNote = "a name gcsput reserves for its own files beside a download: not downloaded"

// isTempFileName reports whether the last element of a local path is a name
// gcsput itself gives the files it writes beside a download's target: a
// download's partial file (".NAME.gcsput-partial", locked while its download
// runs, kept for the next run when it stops), the file a download of a
// gzip-stored object decompresses into (".NAME.gcsput-gunzip") or the probe that tells whether
// a directory ignores case (".gcsput-case-HEX-Aa"). Tools that mirror a
// directory leave such files alone, as they leave components alone (see
// [isComponentName]): they may belong to a download in progress, and
// 'gcsput sessions cancel' and 'gc' clean up the abandoned ones.
func isTempFileName(path string) bool {
	base := filepath.Base(filepath.FromSlash(path))
	if strings.HasPrefix(base, caseProbePrefix) && strings.HasSuffix(base, caseProbeSuffix) {
		return true
	}
	for _, suffix := range []string{partialSuffix, gunzipSuffix} {
		if len(base) > len("."+suffix) && base[0] == '.' && strings.HasSuffix(base, suffix) {
			return true
		}
	}
	return false
}

// caseInsensitive reports whether names in dir compare without case (the
// default on macOS and Windows): it creates a probe file and looks for it
// under another case. A directory that cannot be written counts as
// case-sensitive; the download will fail there anyway.
func caseInsensitive(dir string) bool {
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := filepath.Join(dir, caseProbePrefix+hex.EncodeToString(b[:])+caseProbeSuffix)
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return false
	}
	f.Close()
	defer os.Remove(name)
	_, err = os.Lstat(filepath.Join(filepath.Dir(name), strings.ToUpper(filepath.Base(name))))
	return err == nil
}

// errTempLink is the error for a temporary file that is a link.
var errTempLink = errors.New("is a link")

// openTemp opens t's temporary file for writing from offset, never through a
// link: a fresh one is created with O_EXCL; an existing one must be a
// regular file with a single link, and the file opened must be the one
// looked at. The file is locked (where the OS allows it), so a second
// transfer, in this process or another, cannot write to it at the same time.
func openTemp(t target, offset int64) (*os.File, error) {
	name := t.temp()
	abs := tempPath(t.abs)
	if offset == 0 {
		// Most downloads start fresh: create first, and look at what is
		// there only if something is (O_EXCL never follows a link).
		f, err := t.root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			if err := lockTemp(f, abs, -1); err != nil {
				return nil, err
			}
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}
	fi, err := t.root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("download: the partial download %s is gone", abs)
	case err != nil:
		return nil, err
	}
	if err := plainFile(abs, fi); err != nil {
		return nil, err
	}
	f, err := t.root.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if now, err := f.Stat(); err != nil || !os.SameFile(fi, now) {
		f.Close()
		return nil, fmt.Errorf("download: %s was replaced while it was being opened: %w; remove it and run again", abs, errTempLink)
	}
	if err := lockTemp(f, abs, offset); err != nil {
		return nil, err
	}
	return f, nil
}

// lockTemp locks an open temporary file against a second writer and cuts it
// to offset (-1: a file just created, already empty); on failure f is
// closed.
func lockTemp(f *os.File, abs string, offset int64) error {
	if err := lockFile(f); err != nil {
		f.Close()
		return fmt.Errorf("download: %s is being written by another transfer (%v)", abs, err)
	}
	if offset >= 0 {
		if err := f.Truncate(offset); err != nil {
			f.Close()
			return fmt.Errorf("download: %w", err)
		}
	}
	return nil
}

// plainFile refuses a temporary file that is not a regular file of one link:
// writing through a symlink or a hard link would change another file.
func plainFile(abs string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("download: the temporary file %s %w (symbolic); gcsput never writes through one: remove it and run again", abs, errTempLink)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("download: the temporary file %s is not a regular file (%v): remove it and run again", abs, fi.Mode().Type())
	case linkCount(fi) > 1:
		return fmt.Errorf("download: the temporary file %s %w (%d hard links); gcsput never writes to a file another name shares: remove it and run again",
			abs, errTempLink, linkCount(fi))
	}
	return nil
}
