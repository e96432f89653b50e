package upload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// results collects what a Client gives Options.OnResult, from any goroutine.
type results struct {
	mu  sync.Mutex
	all []*Result
}

func (rs *results) add(r *Result) {
	rs.mu.Lock()
	rs.all = append(rs.all, r)
	rs.mu.Unlock()
}

// byStatus lists the Dest of each result of status st, sorted.
func (rs *results) byStatus(st Status) []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var out []string
	for _, r := range rs.all {
		if r.Status == st {
			out = append(out, r.Dest)
		}
	}
	slices.Sort(out)
	return out
}

// syncClient is a test client whose results go to rs.
func syncClient(t *testing.T, srv *fakegcs.Server, mod func(*Options)) (*Client, *results) {
	rs := &results{}
	return newClient(t, srv, func(o *Options) {
		o.OnResult = rs.add
		if mod != nil {
			mod(o)
		}
	}), rs
}

func objectNames(t *testing.T, srv *fakegcs.Server) string {
	names, err := srv.ObjectNames(testBucket)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(names, " ")
}

var prefixB = RemoteSide(URL{Bucket: testBucket, Object: "b"})

// A sync up copies what the prefix lacks, deletes what the tree lacks,
// reports every entry, and a second run sends nothing; a sync down makes
// the same tree, byte for byte.
func TestSyncBothWays(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	c, rs := syncClient(t, srv, nil)
	src := t.TempDir()
	big, small := randBytes(1<<20+7, 1), []byte("small")
	writeTemp(t, src, "big.bin", big)
	writeTemp(t, src, "sub/small.txt", small)
	writeTemp(t, src, "sub/skip.tmp", small)
	srv.PutObject(testBucket, "b/stale.txt", []byte("stale"))
	srv.PutObject(testBucket, "b/keep.tmp", []byte("excluded, so kept"))
	o := SyncOptions{Delete: true, MaxDelete: MaxDeletePercent(100), Exclude: []string{"*.tmp"}}

	rep, err := c.Sync(context.Background(), LocalSide(src), prefixB, o)
	if err != nil || rep.Copied != 2 || rep.Deleted != 1 || rep.Bytes != int64(len(big)+len(small)) || rep.Failed != 0 {
		t.Fatalf("sync up: %+v, %v", rep, err)
	}
	wantObject(t, srv, "b/big.bin", big)
	wantObject(t, srv, "b/sub/small.txt", small)
	if got := objectNames(t, srv); got != "b/big.bin b/keep.tmp b/sub/small.txt" {
		t.Errorf("objects %q", got)
	}
	if got := rs.byStatus(StatusDeleted); len(got) != 1 || got[0] != "gs://bkt/b/stale.txt" {
		t.Errorf("deleted results %q", got)
	}
	for _, r := range rs.all {
		if r.Status == StatusDeleted && (r.Source != "" || r.Size != 5 || r.Object != "b/stale.txt" || r.Generation == 0) {
			t.Errorf("a deletion's result: %+v", r)
		}
	}

	inserts := srv.Count("storage.objects.insert")
	rep, err = c.Sync(context.Background(), LocalSide(src), prefixB, o)
	if err != nil || rep.Unchanged != 2 || rep.Copied+rep.Deleted != 0 || rep.Transferred != 0 || srv.Count("storage.objects.insert") != inserts {
		t.Errorf("second sync up: %+v, %v, %d inserts", rep, err, srv.Count("storage.objects.insert")-inserts)
	}
	if got := rs.byStatus(StatusSkipped); len(got) != 2 {
		t.Errorf("unchanged results %q", got)
	}

	dst := filepath.Join(t.TempDir(), "made")
	writeTemp(t, dst, "extra.txt", small)
	rep, err = c.Sync(context.Background(), prefixB, LocalSide(dst), SyncOptions{Delete: true, MaxDelete: MaxDeleteCount(1), Exclude: o.Exclude})
	if err != nil || rep.Copied != 2 || rep.Deleted != 1 {
		t.Fatalf("sync down: %+v, %v", rep, err)
	}
	for rel, want := range map[string][]byte{"big.bin": big, "sub/small.txt": small} {
		if got, err := os.ReadFile(filepath.Join(dst, rel)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, %v", rel, len(got), err)
		}
	}
	if _, err := os.Stat(filepath.Join(dst, "extra.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("extra.txt: %v", err)
	}
}

// A file edited in place with the same size is found by its CRC32C; with
// CompareMTime by its time alone.
func TestSyncCompares(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	c, _ := syncClient(t, srv, nil)
	src := t.TempDir()
	p := writeTemp(t, src, "a.txt", []byte("aaaa"))
	if _, err := c.Sync(context.Background(), LocalSide(src), prefixB, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	os.WriteFile(p, []byte("zzzz"), 0o644)
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	if rep, err := c.Sync(context.Background(), LocalSide(src), prefixB, SyncOptions{CompareMTime: true}); err != nil || rep.Unchanged != 1 {
		t.Errorf("same size and mtime with CompareMTime: %+v, %v", rep, err)
	}
	if rep, err := c.Sync(context.Background(), LocalSide(src), prefixB, SyncOptions{}); err != nil || rep.Copied != 1 {
		t.Errorf("same size, other CRC32C: %+v, %v", rep, err)
	}
	wantObject(t, srv, "b/a.txt", []byte("zzzz"))
}

// A dry run reads both sides and changes nothing; it counts unchanged
// entries without reporting them, and carries the guard's verdict.
func TestPlanSync(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	c, rs := syncClient(t, srv, nil)
	src := t.TempDir()
	writeTemp(t, src, "same.txt", []byte("same"))
	writeTemp(t, src, "new.txt", []byte("new!!"))
	srv.PutObject(testBucket, "b/same.txt", []byte("same"))
	for i := range 3 {
		srv.PutObject(testBucket, fmt.Sprintf("b/old%d", i), []byte("old"))
	}
	plan, err := c.PlanSync(context.Background(), LocalSide(src), prefixB, SyncOptions{Delete: true})
	if err != nil || len(plan.Copies) != 1 || plan.Copies[0].Source != filepath.Join(src, "new.txt") || plan.Copies[0].Dest != "gs://bkt/b/new.txt" ||
		plan.Bytes != 5 || plan.Unchanged != 1 || len(plan.Deletes) != 3 || plan.Deletes[0].Dest != "gs://bkt/b/old0" || plan.Deletes[0].Source != "" ||
		plan.SourceEntries != 2 || plan.DestEntries != 4 || plan.Refused != nil || plan.Withheld != "" {
		t.Fatalf("plan %+v, %v", plan, err)
	}
	if n := srv.Count("storage.objects.insert") + srv.Count("storage.objects.delete"); n != 0 || len(rs.all) != 0 {
		t.Errorf("a dry run made %d changes and %d results", n, len(rs.all))
	}
	plan, err = c.PlanSync(context.Background(), LocalSide(src), prefixB, SyncOptions{Delete: true, MaxDelete: MaxDeleteCount(2)})
	if !errors.Is(plan.Refused, ErrDeleteGuard) || err != nil {
		t.Errorf("over the limit: refused %v, %v", plan.Refused, err)
	}
}

// The plan is given to OnPlan once, before the first copy.
func TestSyncOnPlan(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	src := t.TempDir()
	writeTemp(t, src, "a", []byte("a"))
	writeTemp(t, src, "b", []byte("bb"))
	var calls, before int
	c, rs := syncClient(t, srv, nil)
	_, err := c.Sync(context.Background(), LocalSide(src), prefixB, SyncOptions{OnPlan: func(p *SyncPlan) {
		calls++
		before = srv.Count("storage.objects.insert")
		if len(p.Copies) != 2 || p.Bytes != 3 {
			t.Errorf("plan %+v", p)
		}
	}})
	if err != nil || calls != 1 || before != 0 || len(rs.byStatus(StatusUploaded)) != 2 {
		t.Errorf("%v: OnPlan called %d times, after %d inserts", err, calls, before)
	}
}
