package upload

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// Every documented error of a sync, each as it is returned.

// Sides and options that cannot work fail with ErrBadOption (ErrBadName
// for a bad bucket) before any request.
func TestSyncBadOptions(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	c, _ := syncClient(t, srv, nil)
	dir := t.TempDir()
	file := writeTemp(t, dir, "file.txt", []byte("x"))
	for _, tc := range []struct {
		name     string
		src, dst Side
		o        SyncOptions
		want     error
		text     string
	}{
		{"zero side", Side{}, prefixB, SyncOptions{}, ErrBadOption, "a sync side is empty"},
		{"local to local", LocalSide(dir), LocalSide(dir + "2"), SyncOptions{}, ErrBadOption, "one side of a sync must be gs://"},
		{"missing source", LocalSide(filepath.Join(dir, "nope")), prefixB, SyncOptions{}, fs.ErrNotExist, `nope": does not exist`},
		{"file source", LocalSide(file), prefixB, SyncOptions{}, ErrBadOption, `file.txt": is a file`},
		{"bad bucket", LocalSide(dir), RemoteSide(URL{Bucket: "B!"}), SyncOptions{}, ErrBadName, "B!"},
		{"negative count", LocalSide(dir), prefixB, SyncOptions{MaxDelete: MaxDeleteCount(-1)}, ErrBadOption, `SyncOptions.MaxDelete "-1"`},
		{"share over 100", LocalSide(dir), prefixB, SyncOptions{MaxDelete: MaxDeletePercent(101)}, ErrBadOption, `SyncOptions.MaxDelete "101%"`},
		{"bad glob", LocalSide(dir), prefixB, SyncOptions{Include: []string{"[a-"}}, ErrBadOption, "[a-"},
		{"bad regexp", LocalSide(dir), prefixB, SyncOptions{ExcludeRegexp: []string{"(x"}}, ErrBadOption, `SyncOptions.ExcludeRegexp "(x"`},
	} {
		_, err := c.Sync(context.Background(), tc.src, tc.dst, tc.o)
		_, perr := c.PlanSync(context.Background(), tc.src, tc.dst, tc.o)
		if !errors.Is(err, tc.want) || !strings.Contains(fmt.Sprint(err), tc.text) || !errors.Is(perr, tc.want) {
			t.Errorf("%s: %v (plan: %v), want %v and %q", tc.name, err, perr, tc.want, tc.text)
		}
		if tc.want == fs.ErrNotExist && !errors.Is(err, ErrBadOption) {
			t.Errorf("%s: %v does not match ErrBadOption", tc.name, err)
		}
	}
	if _, err := ParseSide("gs:/bkt/b"); !errors.Is(err, ErrBadName) || !strings.Contains(err.Error(), "did you mean gs://bkt/b?") {
		t.Errorf("ParseSide of a typo: %v", err)
	}
	if s, err := ParseSide("gs://bkt/b/"); err != nil || !s.IsRemote() || s.URL() != (URL{Bucket: "bkt", Object: "b/"}) || s.String() != "gs://bkt/b/" {
		t.Errorf("ParseSide: %+v, %v", s, err)
	}
	bad, _ := syncClient(t, srv, func(o *Options) { o.Shard = "3/2" })
	if _, err := bad.Sync(context.Background(), LocalSide(dir), prefixB, SyncOptions{}); !errors.Is(err, ErrBadOption) || !strings.Contains(err.Error(), "Options.Shard") {
		t.Errorf("bad shard: %v", err)
	}
	if n := len(srv.Log()); n != 0 {
		t.Errorf("%d requests", n)
	}
}

// A listing page that fails after its retries fails the sync with
// ErrIncompleteSide: nothing copied, nothing deleted, no report.
func TestSyncIncompleteSide(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	c, rs := syncClient(t, srv, nil)
	src := t.TempDir()
	writeTemp(t, src, "a.txt", []byte("a"))
	for i := range 1001 { // two pages of 1000
		srv.PutObject(testBucket, fmt.Sprintf("b/stale%04d", i), []byte("stale"))
	}
	in := srv.Inject(fakegcs.Fault{Op: "storage.objects.list", Skip: 1, Kind: fakegcs.KindStatus, Status: 403})
	rep, err := c.Sync(context.Background(), LocalSide(src), prefixB, SyncOptions{Delete: true, MaxDelete: MaxDeletePercent(100)})
	names, _ := srv.ObjectNames(testBucket)
	if !errors.Is(err, ErrIncompleteSide) || rep != nil || in.Fired() != 1 || !strings.Contains(err.Error(), "listing gs://bkt/b/ (nothing was changed)") {
		t.Errorf("%+v, %v", rep, err)
	}
	if len(names) != 1001 || srv.Count("storage.objects.insert") != 0 || len(rs.all) != 0 {
		t.Errorf("%d objects, %d inserts, %d results", len(names), srv.Count("storage.objects.insert"), len(rs.all))
	}
	// A local side: a directory that cannot be read.
	if os.Geteuid() == 0 {
		return // root reads it anyway
	}
	locked := filepath.Join(src, "locked")
	os.MkdirAll(locked, 0o755)
	os.Chmod(locked, 0)
	defer os.Chmod(locked, 0o755)
	if _, err := c.Sync(context.Background(), LocalSide(src), RemoteSide(URL{Bucket: testBucket, Object: "c"}), SyncOptions{}); !errors.Is(err, ErrIncompleteSide) {
		t.Errorf("unreadable directory: %v", err)
	}
}

// The delete guard's refusal is a *DeleteGuardError matching
// ErrDeleteGuard, with its numbers, and nothing changes.
func TestSyncDeleteGuard(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	c, _ := syncClient(t, srv, nil)
	for i := range 30 {
		srv.PutObject(testBucket, fmt.Sprintf("b/f%02d", i), []byte("old"))
	}
	empty, src := t.TempDir(), t.TempDir()
	for i := range 10 {
		writeTemp(t, src, fmt.Sprintf("f%02d", i), []byte("new"))
	}
	for _, tc := range []struct {
		src          string
		o            SyncOptions
		reason       GuardReason
		source, dels int
	}{
		{empty, SyncOptions{Delete: true, MaxDelete: MaxDeletePercent(100)}, GuardEmptySource, 0, 30},
		{src, SyncOptions{Delete: true}, GuardOverLimit, 10, 20},
		{src, SyncOptions{Delete: true, MaxDelete: MaxDeleteCount(19)}, GuardOverLimit, 10, 20},
	} {
		rep, err := c.Sync(context.Background(), LocalSide(tc.src), prefixB, tc.o)
		var ge *DeleteGuardError
		if !errors.Is(err, ErrDeleteGuard) || !errors.As(err, &ge) || ge.Reason != tc.reason || ge.SourceEntries != tc.source ||
			ge.DestEntries != 30 || ge.Deletes != tc.dels || ge.Limit != tc.o.MaxDelete || rep == nil || rep.Copied != 0 {
			t.Errorf("%+v: %+v, %v", tc, rep, err)
		}
	}
	srv.PutObject(testBucket, "other/x", []byte("x"))
	_, err := c.Sync(context.Background(), LocalSide(src), RemoteSide(URL{Bucket: testBucket, Object: "other"}), SyncOptions{Delete: true})
	if ge := (*DeleteGuardError)(nil); !errors.As(err, &ge) || ge.Reason != GuardNoSharedPath || ge.All() != "the one object" {
		t.Errorf("no shared path: %v", err)
	}
	if n := srv.Count("storage.objects.insert") + srv.Count("storage.objects.delete"); n != 0 {
		t.Errorf("%d inserts and deletes after the refusals", n)
	}
}

// A failed copy fails the sync (ErrSomeFailed, unwrapping to the cause)
// and withholds every delete (ErrDeletesWithheld), not only its own.
func TestSyncFailureWithholdsDeletes(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	c, rs := syncClient(t, srv, nil)
	src := t.TempDir()
	for _, f := range []string{"keep.txt", "gone.txt"} {
		writeTemp(t, src, f, []byte(f))
	}
	if _, err := c.Sync(context.Background(), LocalSide(src), prefixB, SyncOptions{Delete: true}); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(src, "gone.txt"))
	writeTemp(t, src, "keep.txt", []byte("changed"))
	srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindStatus, Status: 403, Times: -1})
	rep, err := c.Sync(context.Background(), LocalSide(src), prefixB, SyncOptions{Delete: true})
	if !errors.Is(err, ErrSomeFailed) || !errors.Is(err, ErrDeletesWithheld) || !strings.Contains(err.Error(), "403") ||
		!strings.Contains(err.Error(), "1 delete withheld (1 failure)") {
		t.Errorf("error %v", err)
	}
	if rep == nil || rep.Failed != 1 || rep.Deleted != 0 || rep.DeletesWithheld != 1 || rep.WithheldBecause != "1 failure" {
		t.Errorf("report %+v", rep)
	}
	if got := objectNames(t, srv); got != "b/gone.txt b/keep.txt" || srv.Count("storage.objects.delete") != 0 || len(rs.byStatus(StatusFailed)) != 1 {
		t.Errorf("objects %q, %d deletes", got, srv.Count("storage.objects.delete"))
	}
}

// A failure of the walk in a sharded sync is reported by the shard that
// owns its path; the other shard's deletes are withheld too, and its error
// matches ErrDeletesWithheld alone: none of its own entries failed.
func TestSyncShardWithheldElsewhere(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	src := t.TempDir()
	for i := range 8 {
		writeTemp(t, src, fmt.Sprintf("keep%d", i), []byte("k"))
		srv.PutObject(testBucket, fmt.Sprintf("b/keep%d", i), []byte("k"))
		srv.PutObject(testBucket, fmt.Sprintf("b/gone%d", i), []byte("g"))
	}
	os.Symlink("/nonexistent/x", filepath.Join(src, "broken"))
	owners := 0
	for i := range 2 {
		c, _ := syncClient(t, srv, func(o *Options) { o.Shard = fmt.Sprintf("%d/2", i) })
		rep, err := c.Sync(context.Background(), LocalSide(src), prefixB, SyncOptions{Delete: true})
		switch {
		case rep == nil:
			t.Fatalf("shard %d: %v", i, err)
		case rep.Failed == 1:
			owners++
			if !errors.Is(err, ErrSomeFailed) || rep.WithheldBecause != "1 failure" {
				t.Errorf("owning shard %d: %+v, %v", i, rep, err)
			}
		case errors.Is(err, ErrSomeFailed) || !errors.Is(err, ErrDeletesWithheld) ||
			rep.WithheldBecause != "1 failure of the walk, reported by the shard that owns it":
			t.Errorf("shard %d: %+v, %v", i, rep, err)
		}
		if rep.Deleted != 0 || rep.DeletesWithheld == 0 {
			t.Errorf("shard %d: %+v", i, rep)
		}
	}
	if names, _ := srv.ObjectNames(testBucket); owners != 1 || len(names) != 16 {
		t.Errorf("%d owners, %d objects", owners, len(names))
	}
}
