package sumcache

import (
	"container/heap"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// A run's temporary files (spilled runs, the file being written) are named
// .crc32c.cache.*.tmp and locked while their writer lives: Open removes
// those of a writer that died.
const tempPattern = "." + FileName + ".*.tmp"

// newTemp creates a locked 0600 temporary file in dir.
func newTemp(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, tempPattern)
	if err != nil {
		return nil, err
	}
	if err = tryLock(f); err == nil {
		err = f.Chmod(0o600)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// sweep removes the temporary files of writers that died: unlocked, and
// not just made. A writer creates its file and then locks it; a file found
// unlocked within sweepAge of its making may be one between those two
// steps, and removing it would lose that writer's rename.
func sweep(dir string) {
	tmps, _ := filepath.Glob(filepath.Join(dir, tempPattern))
	for _, t := range tmps {
		f, err := os.OpenFile(t, os.O_RDONLY|noFollow, 0)
		if err != nil {
			continue
		}
		if tryLock(f) == nil {
			if fi, err := f.Stat(); err == nil && time.Since(fi.ModTime()) > sweepAge {
				os.Remove(t)
			}
		}
		f.Close()
	}
}

// sweepAge is how old an unlocked temporary file is before sweep takes it
// for a dead writer's.
const sweepAge = time.Minute

// spill writes pending, sorted, as a run; with mergeRuns runs, merges
// them into one. A run stays open, and so locked, until Flush. Called with
// mu held.
func (c *Cache) spill() error {
	p := sortPending(c.pending)
	c.pending = c.pending[:0]
	f, err := newTemp(c.dir)
	if err != nil {
		return err
	}
	if err := writeAll(f, []source{&sliceSource{p: p}}, -1, 0, 0); err != nil {
		drop(f)
		return err
	}
	c.runs = append(c.runs, f)
	if len(c.runs) < mergeRuns {
		return nil
	}
	srcs, err := c.openRuns()
	if err != nil {
		return err
	}
	out, err := newTemp(c.dir)
	if err != nil {
		return err
	}
	if err := writeAll(out, srcs, -1, 0, 0); err != nil {
		drop(out)
		return err
	}
	for _, r := range c.runs {
		drop(r)
	}
	c.runs = []*os.File{out}
	return nil
}

// drop closes and removes a temporary file.
func drop(f *os.File) {
	os.Remove(f.Name())
	f.Close()
}

// openRuns reads the spilled runs as sources, checked as any cache file is.
func (c *Cache) openRuns() ([]source, error) {
	var srcs []source
	for _, f := range c.runs {
		t, err := openTable(f)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, t.scan())
	}
	return srcs, nil
}

// Flush merges what this run used and read into the file, dropping
// entries older than MaxAge and beyond MaxEntries, and goes on with the new
// file for lookups. The file is replaced atomically (a temporary file,
// fsync, rename), under a lock on FileName.mu so that concurrent processes
// (--shard workers sharing a state directory) each add theirs. The lock
// file is never removed: one removed between another process's open and
// flock would let two merges run at once (and state.Open removes unheld
// *.lock files, hence its name).
func (c *Cache) Flush() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.npend == 0 {
		return nil
	}
	unlock, err := lockDir(filepath.Join(c.dir, FileName+".mu"))
	if err != nil {
		return fmt.Errorf("checksum cache: %w", err)
	}
	defer unlock()
	err = c.merge(true)
	if errors.Is(err, errCorrupt) {
		c.ignore(err)
		err = c.merge(false) // without the file on disk: rebuilt from this run
	}
	if err != nil {
		return fmt.Errorf("checksum cache %s: %w", c.path(), err)
	}
	for _, r := range c.runs {
		drop(r)
	}
	c.runs, c.pending, c.npend = nil, nil, 0
	if c.base != nil {
		c.base.f.Close()
	}
	c.base, _ = c.openFile()
	c.loaded = true
	return nil
}

// merge writes the file from this run's entries and, withOld, the entries
// of the file now on disk (another process may have replaced the one
// opened).
func (c *Cache) merge(withOld bool) error {
	var srcs []source
	old := -1
	if withOld {
		t, err := c.openFile()
		switch {
		case err == nil:
			defer t.f.Close()
			old, srcs = 0, append(srcs, t.scan())
		case !errors.Is(err, os.ErrNotExist):
			c.ignore(err)
		}
	}
	runs, err := c.openRuns()
	if err != nil {
		return err
	}
	srcs = append(srcs, runs...)
	srcs = append(srcs, &sliceSource{p: sortPending(c.pending)})
	f, err := newTemp(c.dir)
	if err != nil {
		return err
	}
	oldest := c.now().Add(-MaxAge).UnixNano()
	err = writeAll(f, srcs, old, oldest, max(MaxEntries-c.npend, 1))
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = os.Rename(f.Name(), c.path())
	}
	if err != nil {
		drop(f)
		return err
	}
	f.Close()
	return syncDir(c.dir)
}

// source yields entries in path order; io.EOF after the last.
type source interface{ next() (Entry, error) }

type sliceSource struct{ p []Entry }

func (s *sliceSource) next() (Entry, error) {
	if len(s.p) == 0 {
		return Entry{}, io.EOF
	}
	e := s.p[0]
	s.p = s.p[1:]
	return e, nil
}

// writeAll merges srcs into f. Of entries for the same path the one seen
// last wins, a later source on a tie. Entries seen before oldest are
// dropped; with room > 0, at most room entries of srcs[old] (the file on
// disk, whose entries this run did not use) are kept.
func writeAll(f *os.File, srcs []source, old int, oldest int64, room int) error {
	w, err := newWriter(f)
	if err != nil {
		return err
	}
	h := &mergeHeap{}
	for i, s := range srcs {
		if err := h.pull(i, s); err != nil {
			return err
		}
	}
	oldKept := 0
	for h.Len() > 0 {
		best := (*h)[0]
		// Take every head with best's path, keep the winner.
		for h.Len() > 0 && (*h)[0].e.Path == best.e.Path {
			top := heap.Pop(h).(item)
			if top.e.Seen > best.e.Seen || top.e.Seen == best.e.Seen && top.src > best.src {
				best = top
			}
			if err := h.pull(top.src, srcs[top.src]); err != nil {
				return err
			}
		}
		if best.e.Seen < oldest {
			continue
		}
		if best.src == old {
			if oldKept++; room > 0 && oldKept > room {
				continue
			}
		}
		if err := w.add(&best.e); err != nil {
			return err
		}
	}
	return w.finish()
}

type item struct {
	e   Entry
	src int
}

type mergeHeap []item

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	if h[i].e.Path != h[j].e.Path {
		return h[i].e.Path < h[j].e.Path
	}
	return h[i].src < h[j].src
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(item)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// pull pushes the next entry of source i, if any.
func (h *mergeHeap) pull(i int, s source) error {
	e, err := s.next()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return err
	}
	heap.Push(h, item{e: e, src: i})
	return nil
}
