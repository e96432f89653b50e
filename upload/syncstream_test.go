package upload

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// The sync merges two streams in GCS's name order. These names order
// differently as bytes of the whole path than as paths ("a.b" < "a/x" <
// "a0", while a walk path by path enters "a" first), and "q" is a file on
// one side where the other has "q/x"; "r" the reverse.
var (
	mergeSame = []string{"a-b", "a/x", "ä", "z/é"}
	mergeDiff = "a.b"                                     // on both sides, its content changed
	mergeSrc  = []string{"a/x-y", "a0", "q", "r/x"}       // only in the source
	mergeDst  = []string{"a/x.y", "q/x", "r", "zz", "ä0"} // only in the destination
)

// putSide writes the names on side: files under a directory, or objects
// under a prefix.
func putSide(t *testing.T, srv *fakegcs.Server, side Side, names []string, content func(string) string) {
	t.Helper()
	for _, n := range names {
		if side.IsRemote() {
			if _, err := srv.PutObject(side.URL().Bucket, side.prefix()+n, []byte(content(n))); err != nil {
				t.Fatal(err)
			}
			continue
		}
		writeTemp(t, side.Dir(), n, []byte(content(n)))
	}
}

func paths(items []SyncItem) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Path)
	}
	return out
}

// Each direction plans the same from the same two sides: the merge meets
// "a/x" with "a/x" though "a.b" and "a-b" sort between "a" and "a/" on one
// side, and lists copies and deletes in byte order of the names.
func TestSyncMergesInByteOrder(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	remote := func(p string) Side { return RemoteSide(URL{Bucket: testBucket, Object: p}) }
	for _, tc := range []struct {
		name     string
		src, dst Side
	}{
		{"upload", LocalSide(t.TempDir()), remote("up")},
		{"download", remote("down"), LocalSide(t.TempDir())},
		{"across", remote("from"), remote("to")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			same := func(n string) string { return "same " + n }
			putSide(t, srv, tc.src, append(slices.Clone(mergeSame), mergeSrc...), same)
			putSide(t, srv, tc.dst, append(slices.Clone(mergeSame), mergeDst...), same)
			putSide(t, srv, tc.src, []string{mergeDiff}, func(string) string { return "new" })
			putSide(t, srv, tc.dst, []string{mergeDiff}, func(string) string { return "old" })
			c, _ := syncClient(t, srv, nil)
			p, err := c.PlanSync(context.Background(), tc.src, tc.dst, SyncOptions{Delete: true, MaxDelete: MaxDeletePercent(100)})
			if err != nil {
				t.Fatal(err)
			}
			wantCopies := []string{"a.b", "a/x-y", "a0", "q", "r/x"}
			wantDels := []string{"a/x.y", "q/x", "r", "zz", "ä0"}
			if got := paths(p.Copies); !slices.Equal(got, wantCopies) {
				t.Errorf("copies %q, want %q", got, wantCopies)
			}
			if got := paths(p.Deletes); !slices.Equal(got, wantDels) {
				t.Errorf("deletes %q, want %q", got, wantDels)
			}
			if p.Unchanged != len(mergeSame) || p.SourceEntries != 9 || p.DestEntries != 10 || p.NumCopies != 5 || p.NumDeletes != 5 {
				t.Errorf("unchanged %d, source %d, dest %d, %d copies, %d deletes", p.Unchanged, p.SourceEntries, p.DestEntries, p.NumCopies, p.NumDeletes)
			}
		})
	}
}

// The upload of the merge test runs: the destination ends holding the source.
func TestSyncMergedRun(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	src := t.TempDir()
	same := func(n string) string { return "same " + n }
	putSide(t, srv, LocalSide(src), append(slices.Clone(mergeSame), mergeSrc...), same)
	putSide(t, srv, prefixB, append(slices.Clone(mergeSame), mergeDst...), same)
	putSide(t, srv, LocalSide(src), []string{mergeDiff}, func(string) string { return "new" })
	putSide(t, srv, prefixB, []string{mergeDiff}, func(string) string { return "old" })
	c, _ := syncClient(t, srv, nil)
	rep, err := c.Sync(context.Background(), LocalSide(src), prefixB, SyncOptions{Delete: true, MaxDelete: MaxDeletePercent(100)})
	if err != nil || rep.Copied != 5 || rep.Deleted != 5 || rep.Unchanged != 4 {
		t.Fatalf("%+v, %v", rep, err)
	}
	want := "b/a-b b/a.b b/a/x b/a/x-y b/a0 b/q b/r/x b/z/é b/ä"
	if got := objectNames(t, srv); got != want {
		t.Errorf("objects %q, want %q", got, want)
	}
	wantObject(t, srv, "b/a.b", []byte("new"))
}

// A download's object whose name is not its local path ("d//y" is written
// at d/y) is out of the listing's order: it is still compared with d/y,
// which is then not deleted.
func TestSyncDownloadCleanedName(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	dir := t.TempDir()
	writeTemp(t, dir, "d/y", []byte("y"))
	writeTemp(t, dir, "d/z", []byte("stale"))
	srv.PutObject(testBucket, "b/d//y", []byte("y"))
	srv.PutObject(testBucket, "b/e", []byte("e"))
	c, _ := syncClient(t, srv, nil)
	p, err := c.PlanSync(context.Background(), prefixB, LocalSide(dir), SyncOptions{Delete: true, MaxDelete: MaxDeletePercent(100)})
	if err != nil || !slices.Equal(paths(p.Copies), []string{"e"}) || !slices.Equal(paths(p.Deletes), []string{"d/z"}) ||
		p.Unchanged != 1 || p.DestEntries != 2 || p.SourceEntries != 2 {
		t.Errorf("copies %q, deletes %q, %d unchanged, %d dest, %d source, %v", paths(p.Copies), paths(p.Deletes), p.Unchanged, p.DestEntries, p.SourceEntries, err)
	}
}

// With the plan spilled to disk (a bound of 2), the guard still refuses
// before anything changes, a failure still withholds every delete, and a
// clean run makes them; the files were 0600.
func TestSyncSpilledPlanKeepsTheGuard(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	c, rs := syncClient(t, srv, nil)
	for i := range 30 {
		srv.PutObject(testBucket, fmt.Sprintf("b/f%02d", i), []byte("old"))
	}
	src := t.TempDir()
	for i := range 10 {
		writeTemp(t, src, fmt.Sprintf("f%02d", i), []byte("new"))
	}
	st := &syncStats{}
	o := SyncOptions{Delete: true, spillAt: 2, stats: st}
	rep, err := c.Sync(context.Background(), LocalSide(src), prefixB, o)
	var ge *DeleteGuardError
	if !errors.As(err, &ge) || ge.Reason != GuardOverLimit || ge.Deletes != 20 || ge.DestEntries != 30 || rep.Copied != 0 ||
		!st.copiesDisk || !st.delsDisk || st.copiesMem != 2 || st.delsMem != 2 {
		t.Fatalf("%+v, %v, %+v", rep, err, st)
	}
	for _, m := range st.modes {
		if m.Perm() != 0o600 {
			t.Errorf("plan file mode %v", m)
		}
	}
	if len(st.modes) != 2 || srv.Count("storage.objects.insert")+srv.Count("storage.objects.delete") != 0 {
		t.Fatalf("%d plan files; %d inserts, %d deletes after the refusal", len(st.modes), srv.Count("storage.objects.insert"), srv.Count("storage.objects.delete"))
	}

	o.MaxDelete = MaxDeletePercent(100)
	in := srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindStatus, Status: 403, Times: 1})
	rep, err = c.Sync(context.Background(), LocalSide(src), prefixB, o)
	if !errors.Is(err, ErrDeletesWithheld) || rep.Failed != 1 || rep.Copied != 9 || rep.Deleted != 0 || rep.DeletesWithheld != 20 ||
		rep.WithheldBecause != "1 failure" || in.Fired() != 1 || srv.Count("storage.objects.delete") != 0 {
		t.Fatalf("after a failure: %+v, %v", rep, err)
	}

	rep, err = c.Sync(context.Background(), LocalSide(src), prefixB, o)
	if err != nil || rep.Copied != 1 || rep.Unchanged != 9 || rep.Deleted != 20 || len(rs.byStatus(StatusDeleted)) != 20 {
		t.Fatalf("clean run: %+v, %v", rep, err)
	}
	want := make([]string, 10)
	for i := range want {
		want[i] = fmt.Sprintf("b/f%02d", i)
	}
	if got := objectNames(t, srv); got != strings.Join(want, " ") {
		t.Errorf("objects %q", got)
	}
	if left, _ := filepath.Glob(filepath.Join(c.opts.StateDir, ".gcsput-syncplan-*")); len(left) > 0 {
		t.Errorf("plan files left behind: %q", left)
	}
}

// A dry run of a spilled plan returns every item, in order; with --shard
// each worker plans its own share of the deletes.
func TestSyncSpilledDryRunAndShards(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	src := t.TempDir()
	var gone []string
	for i := range 40 {
		name := fmt.Sprintf("f%02d", i)
		if i%2 == 0 {
			writeTemp(t, src, name, []byte("x"))
		} else {
			gone = append(gone, name)
		}
		srv.PutObject(testBucket, "b/"+name, []byte("x"))
	}
	o := SyncOptions{Delete: true, MaxDelete: MaxDeletePercent(100), spillAt: 3}
	c, _ := syncClient(t, srv, nil)
	p, err := c.PlanSync(context.Background(), LocalSide(src), prefixB, o)
	if err != nil || !slices.Equal(paths(p.Deletes), gone) || p.Deletes[5].Dest != "gs://bkt/b/f11" || p.Unchanged != 20 {
		t.Fatalf("deletes %q, %v", paths(p.Deletes), err)
	}
	var union []string
	for i := range 2 {
		c, _ := syncClient(t, srv, func(o *Options) { o.Shard = fmt.Sprintf("%d/2", i) })
		p, err := c.PlanSync(context.Background(), LocalSide(src), prefixB, o)
		if err != nil || len(p.Deletes) == 0 || len(p.Deletes) == len(gone) {
			t.Fatalf("shard %d: %q, %v", i, paths(p.Deletes), err)
		}
		union = append(union, paths(p.Deletes)...)
	}
	if slices.Sort(union); !slices.Equal(union, gone) {
		t.Errorf("the shards' deletes %q, want %q", union, gone)
	}
}

// Over a listing of 20,000 objects (an upload's destination; a download's
// source, 2,000: fakegcs scans its bucket for every page) the merge holds
// a few entries at a time, not the listing, and each plan list at most its
// bound in memory.
func TestSyncHoldsNoWholeSide(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name            string
		dirs            int
		download        bool
		copies, deletes int
	}{
		{"upload", 100, false, 0, 19_000},
		{"download", 10, true, 1_000, 0},
	} {
		srv := newServer(t, fakegcs.Options{})
		local := t.TempDir()
		for d := range tc.dirs {
			for f := range 200 {
				name := fmt.Sprintf("d%03d/f%03d", d, f)
				srv.PutObject(testBucket, "b/"+name, []byte("x"))
				if d < 5 {
					writeTemp(t, local, name, []byte("x"))
				}
			}
		}
		c, _ := syncClient(t, srv, nil)
		src, dst := LocalSide(local), prefixB
		if tc.download {
			src, dst = dst, src
		}
		st := &syncStats{}
		p, err := c.PlanSync(context.Background(), src, dst, SyncOptions{Delete: true, MaxDelete: MaxDeletePercent(100), spillAt: 100, stats: st})
		switch {
		case err != nil:
			t.Fatalf("%s: %v", tc.name, err)
		case p.NumCopies != tc.copies || p.NumDeletes != tc.deletes || p.Unchanged != 1000:
			t.Errorf("%s: %d copies, %d deletes, %d unchanged", tc.name, p.NumCopies, p.NumDeletes, p.Unchanged)
		case st.liveHigh > 3 || st.copiesMem > 100 || st.delsMem > 100:
			// a source entry, the destination's it meets, and the next destination entry pulled
			t.Errorf("%s: held %d entries at most, %d copies and %d deletes in memory", tc.name, st.liveHigh, st.copiesMem, st.delsMem)
		}
	}
}

// A listing out of name order (a server or proxy that does not sort) would
// make the merge pair the wrong entries: the sync fails before anything
// changes, naming the two names.
func TestSyncListingOutOfOrder(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	for _, n := range []string{"a", "b", "c"} {
		srv.PutObject(testBucket, "b/"+n, []byte(n))
	}
	target, _ := url.Parse(srv.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(r *http.Response) error {
		if r.Request.Method != http.MethodGet || !strings.HasSuffix(r.Request.URL.Path, "/o") {
			return nil
		}
		var page map[string]any
		if err := json.NewDecoder(r.Body).Decode(&page); err != nil {
			return err
		}
		if items, ok := page["items"].([]any); ok {
			slices.Reverse(items)
		}
		b, _ := json.Marshal(page)
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		r.Header.Del("Content-Length")
		return nil
	}
	ps := httptest.NewServer(proxy)
	t.Cleanup(ps.Close)
	c, _ := syncClient(t, srv, func(o *Options) { o.Endpoint = ps.URL })
	src := t.TempDir()
	writeTemp(t, src, "b", []byte("new"))
	rep, err := c.Sync(context.Background(), LocalSide(src), prefixB, SyncOptions{Delete: true, MaxDelete: MaxDeletePercent(100)})
	if !errors.Is(err, ErrIncompleteSide) || rep != nil || !strings.Contains(err.Error(), `"b" came after "c", out of name order (nothing was changed)`) {
		t.Fatalf("%+v, %v", rep, err)
	}
	if n := srv.Count("storage.objects.insert") + srv.Count("storage.objects.delete"); n != 0 {
		t.Errorf("%d inserts and deletes", n)
	}
}

// OnPlan of a spilled plan: the lists are on disk, counted, and read back
// whole, in order, by AllCopies.
func TestSyncOnPlanSpilled(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	c, _ := syncClient(t, srv, nil)
	src := t.TempDir()
	var want []string
	for i := range 7 {
		want = append(want, fmt.Sprintf("f%d", i))
		writeTemp(t, src, want[i], []byte("x"))
	}
	var got []string
	calls := 0
	_, err := c.Sync(context.Background(), LocalSide(src), prefixB, SyncOptions{spillAt: 2, OnPlan: func(p *SyncPlan) {
		calls++
		if p.Copies != nil || p.NumCopies != 7 || p.Bytes != 7 || srv.Count("storage.objects.insert") != 0 {
			t.Errorf("plan: %d copies held, %d counted, %d bytes", len(p.Copies), p.NumCopies, p.Bytes)
		}
		for it, err := range p.AllCopies() {
			if err != nil || it.Source != filepath.Join(src, it.Path) || it.Dest != "gs://bkt/b/"+it.Path {
				t.Errorf("%+v, %v", it, err)
			}
			got = append(got, it.Path)
		}
	}})
	if err != nil || calls != 1 || !slices.Equal(got, want) || srv.Count("storage.objects.insert") != 7 {
		t.Errorf("%v: %d calls, copies %q", err, calls, got)
	}
}
