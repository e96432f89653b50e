package sumcache

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func readCRC(f *os.File, size int64) (uint32, error) {
	h := crc32.New(castagnoli)
	_, err := io.Copy(h, io.NewSectionReader(f, 0, size))
	return h.Sum32(), err
}

// run is one process's use of the cache: it opens it, counts reads and
// warnings, and uses clock as the time (zero: real time).
type run struct {
	c     *Cache
	reads int
	warns []string
}

func openRun(t testing.TB, dir string, clock time.Time) *run {
	t.Helper()
	r := &run{}
	r.c = Open(dir, func(m string) { r.warns = append(r.warns, m) })
	if !clock.IsZero() {
		r.c.Now = func() time.Time { return clock }
	}
	r.c.Reads = func(string) { r.reads++ }
	t.Cleanup(func() {
		if r.c.base != nil {
			r.c.base.f.Close()
		}
	})
	return r
}

// sum checks that Sum gives the file's true CRC32C.
func (r *run) sum(t testing.TB, path string) {
	t.Helper()
	got, err := r.c.Sum(path, nil, readCRC)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := crc32.Checksum(b, castagnoli); got != want {
		t.Fatalf("Sum(%s) = %08x, want %08x", path, got, want)
	}
}

func (r *run) flush(t testing.TB) {
	t.Helper()
	if err := r.c.Flush(); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// later is a clock past the racy window of files written now.
func later() time.Time { return time.Now().Add(time.Hour) }

func TestUnchangedFileNotReadAgain(t *testing.T) {
	dir, tree := t.TempDir(), t.TempDir()
	a := filepath.Join(tree, "a")
	writeFile(t, a, "hello")
	r := openRun(t, dir, later())
	r.sum(t, a)
	r.flush(t)
	r2 := openRun(t, dir, later())
	r2.sum(t, a)
	if r.reads != 1 || r2.reads != 0 {
		t.Fatalf("reads: first run %d, second %d; want 1 and 0", r.reads, r2.reads)
	}
	// The second run's use of the entry keeps it for a third.
	r2.flush(t)
	r3 := openRun(t, dir, later())
	r3.sum(t, a)
	if r3.reads != 0 || len(r3.warns) != 0 {
		t.Fatalf("third run: %d reads, warnings %q", r3.reads, r3.warns)
	}
}

func TestRacyEntryReadAgain(t *testing.T) {
	dir, tree := t.TempDir(), t.TempDir()
	a := filepath.Join(tree, "a")
	writeFile(t, a, "hello")
	fi, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	changed := fi.ModTime()
	// Read within the same second as the file's last change: a change
	// after the read, in the same filesystem tick, would leave mtime and
	// ctime as they are, so the entry is not trusted.
	within := changed.Add(RacyWindow / 2)
	r := openRun(t, dir, within)
	r.sum(t, a)
	r.flush(t)
	r2 := openRun(t, dir, within.Add(time.Hour))
	r2.sum(t, a)
	if r2.reads != 1 {
		t.Fatalf("racy entry: %d reads, want 1", r2.reads)
	}
	// That read began long after the change: its entry is trusted.
	r2.flush(t)
	r3 := openRun(t, dir, within.Add(2*time.Hour))
	r3.sum(t, a)
	if r3.reads != 0 {
		t.Fatalf("after a read clear of the window: %d reads, want 0", r3.reads)
	}
}

func TestReplacedFileReadAgain(t *testing.T) {
	dir, tree := t.TempDir(), t.TempDir()
	a := filepath.Join(tree, "a")
	writeFile(t, a, "hello")
	fi, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	r := openRun(t, dir, later())
	r.sum(t, a)
	r.flush(t)
	// Same size, same mtime, another inode: renamed over it.
	b := filepath.Join(tree, "b")
	writeFile(t, b, "HELLO")
	if err := os.Chtimes(b, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(b, a); err != nil {
		t.Fatal(err)
	}
	r2 := openRun(t, dir, later())
	r2.sum(t, a) // checks the CRC is HELLO's
	if r2.reads != 1 {
		t.Fatalf("replaced file: %d reads, want 1", r2.reads)
	}
}

func TestEditedCacheIgnored(t *testing.T) {
	dir, tree := t.TempDir(), t.TempDir()
	a := filepath.Join(tree, "a")
	writeFile(t, a, "hello")
	r := openRun(t, dir, later())
	r.sum(t, a)
	r.flush(t)
	// Change the saved CRC32C, as an edit by hand would: it is the 4 bytes
	// of the record that hold the file's checksum.
	cache := filepath.Join(dir, FileName)
	b, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	want := crc32.Checksum([]byte("hello"), castagnoli)
	var crc [4]byte
	crc[0], crc[1], crc[2], crc[3] = byte(want>>24), byte(want>>16), byte(want>>8), byte(want)
	i := bytes.Index(b, crc[:])
	if i < 0 || bytes.Count(b, crc[:]) != 1 {
		t.Fatalf("the CRC32C %08x is not once in the cache file", want)
	}
	b[i] ^= 0xff
	if err := os.WriteFile(cache, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r2 := openRun(t, dir, later())
	r2.sum(t, a) // the true CRC, not the edited one
	if r2.reads != 1 || len(r2.warns) != 1 || !strings.Contains(r2.warns[0], "checksum does not match") {
		t.Fatalf("edited cache: %d reads, warnings %q; want 1 read and a warning", r2.reads, r2.warns)
	}
	r2.flush(t) // rebuilt
	r3 := openRun(t, dir, later())
	r3.sum(t, a)
	if r3.reads != 0 || len(r3.warns) != 0 {
		t.Fatalf("rebuilt cache: %d reads, warnings %q", r3.reads, r3.warns)
	}
}

func TestUntrustedCacheRebuilt(t *testing.T) {
	for _, tc := range []struct {
		name, warn string
		spoil      func(t *testing.T, cache string)
	}{
		{"other mode", "its mode is 0644", func(t *testing.T, p string) { os.Chmod(p, 0o644) }},
		{"other version", "another version", func(t *testing.T, p string) {
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte("cache v1"), []byte("cache v9"), 1), 0o600)
		}},
		{"cut short", "footer", func(t *testing.T, p string) {
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)-3], 0o600)
		}},
		{"garbage", "not a checksum cache", func(t *testing.T, p string) {
			os.WriteFile(p, bytes.Repeat([]byte("x"), 200), 0o600)
		}},
		{"symlink", "symbolic link", func(t *testing.T, p string) {
			os.Rename(p, p+".real")
			os.Symlink(p+".real", p)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, tree := t.TempDir(), t.TempDir()
			a := filepath.Join(tree, "a")
			writeFile(t, a, "hello")
			r := openRun(t, dir, later())
			r.sum(t, a)
			r.flush(t)
			tc.spoil(t, filepath.Join(dir, FileName))
			r2 := openRun(t, dir, later())
			r2.sum(t, a)
			if r2.reads != 1 || len(r2.warns) != 1 || !strings.Contains(r2.warns[0], tc.warn) {
				t.Fatalf("%d reads, warnings %q; want 1 read and a warning saying %q", r2.reads, r2.warns, tc.warn)
			}
			r2.flush(t)
			fi, err := os.Lstat(filepath.Join(dir, FileName))
			if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
				t.Fatalf("rebuilt cache: %v, %v", fi.Mode(), err)
			}
			r3 := openRun(t, dir, later())
			r3.sum(t, a)
			if r3.reads != 0 || len(r3.warns) != 0 {
				t.Fatalf("rebuilt cache: %d reads, warnings %q", r3.reads, r3.warns)
			}
		})
	}
}

// Processes that share a state directory (--shard workers) flush at once:
// each one's entries are in the file after.
func TestConcurrentFlushesKeepEveryEntry(t *testing.T) {
	dir, tree := t.TempDir(), t.TempDir()
	const procs, files = 4, 50
	var wg sync.WaitGroup
	runs := make([]*run, procs)
	for p := range procs {
		runs[p] = openRun(t, dir, later())
		for i := range files {
			writeFile(t, filepath.Join(tree, fmt.Sprintf("p%d-%d", p, i)), fmt.Sprint(p, i))
		}
	}
	for p := range procs {
		wg.Go(func() {
			for i := range files {
				runs[p].sum(t, filepath.Join(tree, fmt.Sprintf("p%d-%d", p, i)))
			}
			runs[p].flush(t)
		})
	}
	wg.Wait()
	r := openRun(t, dir, later())
	for p := range procs {
		for i := range files {
			r.sum(t, filepath.Join(tree, fmt.Sprintf("p%d-%d", p, i)))
		}
	}
	if r.reads != 0 {
		t.Fatalf("%d of %d files read again after concurrent flushes", r.reads, procs*files)
	}
}

// A run larger than what is held in memory spills sorted runs to disk and
// merges them, with the file's earlier entries.
func TestSpilledRunsMerge(t *testing.T) {
	dir, tree := t.TempDir(), t.TempDir()
	const n = 300
	for i := range n {
		writeFile(t, filepath.Join(tree, fmt.Sprintf("f%03d", i)), fmt.Sprint(i))
	}
	r := openRun(t, dir, later())
	r.c.spillAt = 7 // 300 entries: 42 runs, merged every 16
	for i := n - 1; i >= 0; i -= 2 {
		r.sum(t, filepath.Join(tree, fmt.Sprintf("f%03d", i)))
	}
	r.flush(t)
	r2 := openRun(t, dir, later())
	r2.c.spillAt = 5
	for i := range n {
		r2.sum(t, filepath.Join(tree, fmt.Sprintf("f%03d", i)))
	}
	if r2.reads != n/2 {
		t.Fatalf("second run read %d files, want %d (those the first did not)", r2.reads, n/2)
	}
	r2.flush(t)
	r3 := openRun(t, dir, later())
	for i := range n {
		r3.sum(t, filepath.Join(tree, fmt.Sprintf("f%03d", i)))
	}
	if r3.reads != 0 {
		t.Fatalf("third run read %d files", r3.reads)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, tempPattern)); len(tmps) != 0 {
		t.Fatalf("temporary files left: %q", tmps)
	}
}

// An entry no run used for MaxAge is dropped at the next flush.
func TestOldEntriesEvicted(t *testing.T) {
	dir, tree := t.TempDir(), t.TempDir()
	a, b := filepath.Join(tree, "a"), filepath.Join(tree, "b")
	writeFile(t, a, "a")
	writeFile(t, b, "b")
	start := later()
	r := openRun(t, dir, start)
	r.sum(t, a)
	r.sum(t, b)
	r.flush(t)
	r2 := openRun(t, dir, start.Add(MaxAge+time.Hour))
	r2.sum(t, b)
	r2.flush(t)
	r3 := openRun(t, dir, start.Add(MaxAge+2*time.Hour))
	r3.sum(t, a)
	r3.sum(t, b)
	if r3.reads != 1 {
		t.Fatalf("%d reads, want 1 (a, unused for MaxAge)", r3.reads)
	}
}

// A nil Cache (no state directory) reads every time.
func TestNilCacheReads(t *testing.T) {
	a := filepath.Join(t.TempDir(), "a")
	writeFile(t, a, "hello")
	r := &run{}
	for range 2 {
		r.sum(t, a)
	}
	if err := r.c.Flush(); err != nil {
		t.Fatal(err)
	}
}
