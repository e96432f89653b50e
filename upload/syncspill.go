package upload

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"runtime"
)

// A sync's plan is written down as the two sides are merged and acted on
// only once they are read in full and the delete guard has let it through
// (nothing changes before), so it cannot be dispatched as it is found. Held
// in memory it would grow with the tree (the deletes of a destination that
// lost a million files); a planList keeps its first entries in memory and
// the rest in a temporary file, so what a sync holds stays bounded.

// DefaultSpillAt is how many entries a sync's list of copies, or of deletes,
// holds in memory before the rest go to a temporary file: about 1 MB each.
const DefaultSpillAt = 10_000

// planList is a list of planned copies or deletes: the first spillAt in
// memory, the rest in a temporary file (0600, in the state directory or
// else os.TempDir; unlinked as soon as it is made where the system allows,
// else removed by close).
type planList struct {
	dir     string // where the file goes; "" for os.TempDir
	spillAt int
	mem     []SyncItem
	f       *os.File
	w       *bufio.Writer
	n       int
	buf     []byte
}

// add appends one item. Only Path, Size and the entry's object name and
// generation are kept: Source and Dest are made again from Path.
func (l *planList) add(it SyncItem) error {
	l.n++
	if len(l.mem) < max(l.spillAt, 1) && l.f == nil {
		it.e = &syncEntry{name: it.e.name, gen: it.e.gen, size: it.e.size}
		l.mem = append(l.mem, it)
		return nil
	}
	if l.f == nil {
		f, err := os.CreateTemp(l.dir, ".gcsput-syncplan-*")
		if err != nil {
			return fmt.Errorf("upload: sync: spilling the plan of more than %d entries to disk: %w", l.spillAt, err)
		}
		if runtime.GOOS != "windows" {
			os.Remove(f.Name()) // unlinked at once: a process killed mid-sync leaves nothing behind
		}
		l.f, l.w = f, bufio.NewWriterSize(f, 64<<10)
	}
	b := l.buf[:0]
	b = appendString(b, it.Path)
	b = appendString(b, it.e.name)
	b = binary.AppendVarint(b, it.Size)
	b = binary.AppendVarint(b, it.e.gen)
	l.buf = b
	if _, err := l.w.Write(b); err != nil {
		return fmt.Errorf("upload: sync: writing the plan to %s: %w", l.f.Name(), err)
	}
	return nil
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// len is how many items were added.
func (l *planList) len() int { return l.n }

// spilled reports whether some items are on disk.
func (l *planList) spilled() bool { return l.f != nil }

// all yields the items in the order they were added, then a read error if
// any (a truncated file: the plan is not known whole).
func (l *planList) all() iter.Seq2[SyncItem, error] {
	return func(yield func(SyncItem, error) bool) {
		for _, it := range l.mem {
			if !yield(it, nil) {
				return
			}
		}
		if l.f == nil {
			return
		}
		if err := l.read(yield); err != nil {
			yield(SyncItem{}, fmt.Errorf("upload: sync: reading the plan back from %s: %w", l.f.Name(), err))
		}
	}
}

// read yields the items in the file.
func (l *planList) read(yield func(SyncItem, error) bool) error {
	if err := l.w.Flush(); err != nil {
		return err
	}
	if _, err := l.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(l.f, 64<<10)
	defer l.f.Seek(0, io.SeekEnd) // an add after a read appends
	for i := len(l.mem); i < l.n; i++ {
		path, err1 := readString(r)
		name, err2 := readString(r)
		size, err3 := binary.ReadVarint(r)
		gen, err4 := binary.ReadVarint(r)
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			return fmt.Errorf("item %d of %d: %w", i+1, l.n, err)
		}
		if !yield(SyncItem{Path: path, Size: size, e: &syncEntry{name: name, gen: gen, size: size}}, nil) {
			return nil
		}
	}
	return nil
}

func readString(r *bufio.Reader) (string, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return "", err
	}
	if n > 1<<20 {
		return "", fmt.Errorf("a name of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return string(b), nil
}

// stat describes the file the list went to.
func (l *planList) stat() (fs.FileInfo, error) {
	if l.f == nil {
		return nil, fs.ErrNotExist
	}
	return l.f.Stat()
}

// close removes the file.
func (l *planList) close() {
	if l.f != nil {
		l.f.Close()
		os.Remove(l.f.Name())
		l.f = nil
	}
}
