package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Store is a directory of Records, one file per key. Writes are atomic (a
// temporary file, fsync, rename, fsync of the directory), so a process killed
// at any moment leaves either the old record or the new one. It is safe for
// concurrent use on distinct keys.
type Store struct {
	Dir string
	// Now is the clock for Created/Updated and expiry; nil means time.Now.
	Now func() time.Time
	// Warn, if set, is told once about each record that is ignored because
	// it cannot be trusted (a symlink, not 0600, another user's).
	Warn func(msg string)

	mu     sync.Mutex
	warned map[string]bool
}

// Open creates dir (0700) if needed and returns a Store on it. A directory
// that other users can write to, or that is not the user's, is refused: a
// record planted there would be resumed. Leftover temporary files of writers
// that died are removed.
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("empty state directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	if err := checkStateDir(dir); err != nil {
		return nil, err
	}
	s := &Store{Dir: dir}
	s.sweepTemps()
	return s, nil
}

// warn tells Warn about key once.
func (s *Store) warn(key, msg string) {
	s.mu.Lock()
	first := !s.warned[key]
	if s.warned == nil {
		s.warned = map[string]bool{}
	}
	s.warned[key] = true
	s.mu.Unlock()
	if first && s.Warn != nil {
		s.Warn(msg)
	}
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Path is the file of the record under key, for messages.
func (s *Store) Path(key string) string { return filepath.Join(s.Dir, key+".json") }

// Keys lists the keys of the records in the store now, or nil when the
// directory cannot be read: a batch lists them once rather than opening a
// file per transfer that almost never exists.
func (s *Store) Keys() map[string]bool {
	ents, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil
	}
	m := make(map[string]bool, len(ents))
	for _, e := range ents {
		if k, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			m[k] = true
		}
	}
	return m
}

// Load returns the record saved under key, to be used, or an error matching
// fs.ErrNotExist when there is none. A record of another version is removed
// and reported as not existing. An edited record (see [Record.Edited]) is
// ignored, with a warning, as if it did not exist: its fields are not the
// transfer its key was made for, so none of them may become a request.
func (s *Store) Load(key string) (*Record, error) {
	r, err := s.load(key)
	if err != nil {
		return nil, err
	}
	if r.Edited() {
		s.warn(key, fmt.Sprintf("ignoring the saved session %s: %s; gcsput never uses it ('gcsput sessions gc' removes it)", s.Path(key), EditedWhy))
		return nil, fmt.Errorf("%s ignored: %w", s.Path(key), fs.ErrNotExist)
	}
	return r, nil
}

// Read is Load without refusing an edited record (see Record.Edited), to
// cancel it: whoever reads an edited record sends none of its fields.
func (s *Store) Read(key string) (*Record, error) { return s.load(key) }

// load is Load without the check of the key: List shows an edited record,
// so that it can be named, cancelled and collected.
func (s *Store) load(key string) (*Record, error) {
	b, err := s.read(key)
	if err != nil {
		return nil, err
	}
	r := new(Record)
	if err := json.Unmarshal(b, r); err != nil || r.Version != recordVersion {
		os.Remove(s.Path(key))
		return nil, fmt.Errorf("unreadable saved session %s removed: %w", key, fs.ErrNotExist)
	}
	r.file = key
	return r, nil
}

// EditedWhy is why an edited record can never finish (see [Record.Edited]).
const EditedWhy = "it was edited: its kind, source, destination or shard no longer match its file name"

// FileKey is the key of the file r was read from (see [Store.List]), or,
// for a record not read from disk, r.Key().
func (r *Record) FileKey() string {
	if r.file != "" {
		return r.file
	}
	return r.Key()
}

// Edited reports whether r, read from disk, is not the transfer its file
// name says: the name is Key(kind, source, dest, shard) of the transfer
// that saved it, so a record whose fields were changed by hand (or
// planted under another name) names a transfer it was not made for. It is
// never resumed (Load refuses it) and Store.GC removes it.
func (r *Record) Edited() bool { return r.file != "" && r.file != r.Key() }

// Stuck says why r can never finish, or "" if it may: an edited record
// (see Edited), or one a run marked Unfinishable, unless it is an upload
// whose source file is there again (an unmounted volume mounted again): it
// may then resume. Store.GC removes a stuck record.
func (r *Record) Stuck() string {
	switch {
	case r.Edited():
		return EditedWhy
	case r.Unfinishable == "":
		return ""
	case r.Kind == KindUpload && filepath.IsAbs(r.Source):
		if _, err := os.Stat(r.Source); err == nil {
			return ""
		}
	}
	return r.Unfinishable
}

// ErrChanged is MarkUnfinishable's refusal to mark a record saved again
// since it was read.
var ErrChanged = errors.New("the saved record changed since it was read")

// MarkUnfinishable records in judged's file (see Record.FileKey) that it can
// never finish, and why (see Record.Unfinishable); the caller holds its
// lock. The record is written back under its file's key, whatever its
// fields hash to, and only if the file still holds judged: a record saved
// since (by another process, which took the transfer up again) is not the
// one judged, and marking it would have GC remove a live transfer. That
// case is an error matching ErrChanged, and nothing is written.
func (s *Store) MarkUnfinishable(judged *Record, why string) error {
	key := judged.FileKey()
	r, err := s.load(key)
	if err != nil {
		return err
	}
	if !r.Updated.Equal(judged.Updated) || !r.Created.Equal(judged.Created) {
		return fmt.Errorf("%s: %w", s.Path(key), ErrChanged)
	}
	r.Unfinishable = why
	r.Updated = s.now().UTC()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(s.Dir, key+".json", b)
}

// read returns the content of key's record if the file can be trusted: a
// regular file (opened without following a link), owned by the user, mode
// 0600. Another is ignored, with a warning, as if it did not exist.
func (s *Store) read(key string) ([]byte, error) {
	path := s.Path(key)
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil {
			if why := checkRecordFile(fi); why != "" {
				s.ignore(key, path, why)
				return nil, fmt.Errorf("%s ignored: %w", path, fs.ErrNotExist)
			}
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if why := checkRecordFile(fi); why != "" {
		s.ignore(key, path, why)
		return nil, fmt.Errorf("%s ignored: %w", path, fs.ErrNotExist)
	}
	return io.ReadAll(io.LimitReader(f, maxRecordSize))
}

// maxRecordSize bounds what is read of a record; a real one is about 1 KiB.
const maxRecordSize = 1 << 20

// ignore warns about a record that is not trusted.
func (s *Store) ignore(key, path, why string) {
	s.warn(key, fmt.Sprintf("ignoring the saved session %s: %s; gcsput never uses it (remove it to silence this)", path, why))
}

// Expired reports whether r is too old to resume (see MaxAge).
func (s *Store) Expired(r *Record) bool {
	return s.now().Sub(r.Created) > MaxAge
}

// Save writes r atomically under r.Key(), setting Version, Updated and, if
// zero, Created. It clears Unfinishable: a transfer that saves has moved, so
// an earlier run's finding that it never could is out of date.
func (s *Store) Save(r *Record) error {
	r.Version = recordVersion
	r.Unfinishable = ""
	r.Updated = s.now().UTC()
	if r.Created.IsZero() {
		r.Created = r.Updated
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(s.Dir, r.Key()+".json", b)
}

// Remove deletes the record under key; a missing record is not an error.
func (s *Store) Remove(key string) error {
	err := removeFile(s.Path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// List returns every readable record, oldest first, edited ones included
// (see Record.Edited): each knows its file (Record.FileKey).
func (s *Store) List() ([]*Record, error) {
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var out []*Record
	for _, e := range ents {
		key, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if r, err := s.load(key); err == nil {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, nil
}

// GC removes expired records, those that can never finish (see
// Record.Stuck) and leftover temporary files, returning the records
// removed (as they were when removed), and those left alone because a live
// transfer holds their lock (see Lock).
func (s *Store) GC() (gone, inUse []*Record, err error) {
	recs, err := s.List()
	if err != nil {
		return nil, nil, err
	}
	for _, r := range recs {
		if !s.collectable(r) {
			continue
		}
		key := r.FileKey()
		l, err := s.Lock(key)
		if errors.Is(err, ErrBusy) {
			inUse = append(inUse, r)
			continue
		}
		if err != nil {
			return gone, inUse, err
		}
		// Judged again under the lock: another process may have resumed
		// the transfer since the listing (its Save clears the mark), or
		// saved it anew; what was listed is then out of date.
		now, err := s.load(key)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			l.Release()
			continue
		case err == nil && !s.collectable(now):
			l.Release()
			continue
		case err == nil:
			err = s.Remove(key)
		}
		l.Release()
		if err != nil {
			return gone, inUse, err
		}
		gone = append(gone, now)
	}
	s.sweepTemps()
	return gone, inUse, nil
}

// collectable reports whether GC removes r: expired, or stuck.
func (s *Store) collectable(r *Record) bool { return s.Expired(r) || r.Stuck() != "" }

// sweepTemps removes the temporary files of writers that died between
// creating one and renaming it into place (kill -9): each holds a live
// session URI. A live writer holds a lock on its file until the rename, so
// a file that can be locked is a dead writer's.
func (s *Store) sweepTemps() {
	tmps, _ := filepath.Glob(filepath.Join(s.Dir, ".*.json.*.tmp"))
	for _, t := range tmps {
		f, err := os.OpenFile(t, os.O_RDONLY|noFollow, 0)
		if err != nil {
			if fi, lerr := os.Lstat(t); lerr == nil && !fi.Mode().IsRegular() {
				os.Remove(t)
			}
			continue
		}
		if lockFile(f) == nil {
			os.Remove(t)
		}
		f.Close()
	}
	// The lock files of transfers killed (a live one's cannot be taken).
	locks, _ := filepath.Glob(filepath.Join(s.Dir, "*.lock"))
	for _, p := range locks {
		if l, err := s.Lock(strings.TrimSuffix(filepath.Base(p), ".lock")); err == nil {
			l.Release()
		}
	}
}

// writeAtomic replaces dir/name with b so that a crash leaves the old or the
// new content, never a mix: write a 0600 temporary file, fsync it, rename it
// over the target, fsync the directory so the rename itself is durable.
func writeAtomic(dir, name string, b []byte) (err error) {
	f, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(f.Name())
		}
		f.Close()
	}()
	// Locked until after the rename, so sweepTemps leaves it alone.
	if err = lockFile(f); err != nil {
		return err
	}
	if err = f.Chmod(0o600); err != nil {
		return err
	}
	if _, err = f.Write(b); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), filepath.Join(dir, name)); err != nil {
		return err
	}
	return syncDir(dir)
}
