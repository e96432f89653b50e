// Package sumcache keeps the CRC32C of local files between runs, as git's
// index and restic's files cache keep theirs: each file's checksum is saved
// with the identity it was read under (size, mtime and ctime to the
// nanosecond, inode, device), and a file whose identity is unchanged is not
// read again. A sync of an unchanged tree then costs a stat per file.
//
// # Trust
//
// The cache is one file in the state directory, FileName, held to the rules
// of a session record (a regular 0600 file of the user's own, no symbolic
// link). A cache that breaks them, or that is of another version, cut short,
// or edited (each record and the index carry a CRC32C of their bytes; the
// records must be in order), is ignored, with a warning, and rebuilt from
// what the run reads: no value of it is used.
//
// # Racy entries
//
// A file can change without its mtime moving when the change falls in the
// same tick of the filesystem's clock as the read (ext4 keeps nanoseconds,
// FAT two seconds; the kernel's clock ticks at 1-10 ms). An entry whose
// file's mtime or ctime is within RacyWindow of when the read began is
// therefore not trusted: the file is read again, and its new entry is
// trusted once a later read starts RacyWindow after the last change.
//
// # Bounds
//
// Lookups hold the file's index in memory (one path per 128 files) and one
// block of 128 records; what a run uses is spilled to disk in sorted runs
// of spillEvery entries and merged into the file by Flush. Entries not used
// for MaxAge are dropped, and the file holds at most MaxEntries.
package sumcache

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/gcsput/gcsput/internal/state"
)

// FileName is the cache's file in the state directory.
const FileName = "crc32c.cache"

const (
	// RacyWindow: an entry is trusted only for a file whose mtime and ctime
	// are older than this when the read that made the entry began. Two
	// seconds cover the coarsest common filesystem clock (FAT's).
	RacyWindow = 2 * time.Second
	// MaxEntries bounds the file: about 60 bytes plus the path per entry.
	MaxEntries = 20_000_000
	// MaxAge drops an entry no run has used for this long.
	MaxAge = 45 * 24 * time.Hour

	spillEvery = 1 << 16 // entries held in memory before a sorted run goes to disk
	mergeRuns  = 16      // runs merged into one when there are this many
)

// Cache is the checksum cache of a state directory. It is safe for
// concurrent use; a nil *Cache caches nothing (Sum reads every time).
type Cache struct {
	dir  string
	warn func(string)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Reads, if set, is called before each read of a file's bytes (a miss):
	// tests count them.
	Reads func(path string)

	mu      sync.Mutex
	base    *table     // the file as opened, for lookups; nil if none or ignored
	pending []Entry    // used or computed this run, not yet spilled
	runs    []*os.File // spilled sorted runs, held open (locked) until Flush
	npend   int        // entries used this run, in pending and runs
	spillAt int        // spillEvery; tests lower it
	loaded  bool       // load ran
	warned  bool
}

// Open returns the cache of the state directory dir (already checked, see
// state.Open). The file is opened at the first lookup: a Client that
// compares nothing never reads it. Problems with the file are warnings:
// the cache then starts empty and Flush rebuilds it.
func Open(dir string, warn func(string)) *Cache {
	return &Cache{dir: dir, warn: warn, spillAt: spillEvery}
}

// load opens the file for lookups, once. Called with mu held.
func (c *Cache) load() {
	if c.loaded {
		return
	}
	c.loaded = true
	sweep(c.dir)
	t, err := c.openFile()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.ignore(err)
	}
	c.base = t
}

func (c *Cache) path() string { return filepath.Join(c.dir, FileName) }

func (c *Cache) now() time.Time {
	if c != nil && c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// ignore warns, once, that the file is not used.
func (c *Cache) ignore(err error) {
	if c.warned || c.warn == nil {
		c.warned = true
		return
	}
	c.warned = true
	c.warn(fmt.Sprintf("ignoring the checksum cache %s (%v): files are read again, and it is rebuilt", c.path(), err))
}

// openFile opens the cache file if it is one to trust.
func (c *Cache) openFile() (*table, error) {
	p := c.path()
	li, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if why := state.CheckFile(li); why != "" {
		return nil, errors.New(why)
	}
	f, err := os.OpenFile(p, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !os.SameFile(li, fi) {
		err = errors.New("it was replaced while being opened")
	}
	if err == nil {
		if why := state.CheckFile(fi); why != "" {
			err = errors.New(why)
		}
	}
	var t *table
	if err == nil {
		t, err = openTable(f)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return t, nil
}

// Time is the cache's clock (Now), for the start of a read whose result
// is given to Add.
func (c *Cache) Time() time.Time { return c.now() }

// identity is e's file identity (Path, Size, MTime, CTime, Inode, Dev) from fi.
func identity(path string, fi fs.FileInfo) Entry {
	fp := state.FingerprintOf(path, fi)
	return Entry{Path: path, Size: fp.Size, MTime: fp.ModTime, CTime: fp.CTime, Inode: fp.Inode, Dev: fp.Device}
}

func (e *Entry) sameFile(o *Entry) bool {
	return e.Size == o.Size && e.MTime == o.MTime && e.CTime == o.CTime && e.Inode == o.Inode && e.Dev == o.Dev
}

// racy reports whether e's file changed too close to its read to trust it.
func (e *Entry) racy() bool {
	edge := e.Written - RacyWindow.Nanoseconds()
	return e.MTime >= edge || e.CTime >= edge
}

// Lookup returns the saved CRC32C of the file at path, whose FileInfo (a
// stat following links) is fi, when the entry's identity is fi's and the
// entry is not racy.
func (c *Cache) Lookup(path string, fi fs.FileInfo) (uint32, bool) {
	if c == nil {
		return 0, false
	}
	id := identity(path, fi)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.load()
	if c.base == nil {
		return 0, false
	}
	e, err := c.base.find(path)
	if err != nil {
		c.ignore(err)
		c.base.f.Close()
		c.base = nil
		return 0, false
	}
	if e == nil || !e.sameFile(&id) || e.racy() {
		return 0, false
	}
	used := *e
	used.Seen = c.now().UnixNano()
	c.keep(used)
	return used.CRC, true
}

// Add saves the CRC32C of the file at path, read under fi (unchanged from
// before the read to after it) in a read that began at start.
func (c *Cache) Add(path string, fi fs.FileInfo, crc uint32, start time.Time) {
	if c == nil {
		return
	}
	e := identity(path, fi)
	e.CRC, e.Written = crc, start.UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	e.Seen = c.now().UnixNano()
	c.keep(e)
}

// keep holds e for Flush, spilling a sorted run to disk every spillEvery.
func (c *Cache) keep(e Entry) {
	c.pending = append(c.pending, e)
	c.npend++
	if len(c.pending) >= c.spillAt {
		if err := c.spill(); err != nil {
			c.ignore(fmt.Errorf("saving: %w", err))
		}
	}
}

// Sum returns the CRC32C of the file at path, given open as f or, when f is
// nil, opened here on a miss: the saved one (see Lookup) or read, whose
// result is saved when the file did not change while being read. read
// checksums the first size bytes of a file.
func (c *Cache) Sum(path string, f *os.File, read func(f *os.File, size int64) (uint32, error)) (uint32, error) {
	var fi fs.FileInfo
	var err error
	if f != nil {
		fi, err = f.Stat()
	} else {
		fi, err = os.Stat(path)
	}
	if err == nil && fi.Mode().IsRegular() {
		if crc, ok := c.Lookup(path, fi); ok {
			return crc, nil
		}
	}
	if f == nil {
		if f, err = os.Open(path); err != nil {
			return 0, err
		}
		defer f.Close()
	}
	start := c.now()
	before, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if c != nil && c.Reads != nil {
		c.Reads(path)
	}
	crc, err := read(f, before.Size())
	if err != nil {
		return 0, err
	}
	after, err := f.Stat()
	if err == nil && before.Mode().IsRegular() && state.FingerprintOf(path, before).Change(state.FingerprintOf(path, after)) == "" {
		c.Add(path, before, crc, start)
	}
	return crc, nil
}

// sortPending sorts pending by path, the last kept of each path winning.
func sortPending(p []Entry) []Entry {
	slices.SortStableFunc(p, func(a, b Entry) int { return cmp.Compare(a.Path, b.Path) })
	out := p[:0]
	for i := range p {
		if i+1 < len(p) && p[i+1].Path == p[i].Path {
			continue
		}
		out = append(out, p[i])
	}
	return out
}
