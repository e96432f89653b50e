package upload

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// A sync between two gs:// prefixes copies on the server (rewrite) what
// differs, pinned to the generation listed, deletes what the source lacks
// under the delete guard, and a second run copies nothing: the objects are
// compared by their stored size and CRC32C.
func TestSyncAcrossPrefixes(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{RewriteBytesPerCall: 1 << 20})
	c, rs := syncClient(t, srv, nil)
	big := randBytes(3<<20+5, 2)
	srv.PutObject(testBucket, "a/big.bin", big)
	srv.PutObject(testBucket, "a/sub/same.txt", []byte("same"))
	srv.PutObject(testBucket, "a/changed.txt", []byte("new"))
	srv.PutObject(testBucket, "b/sub/same.txt", []byte("same"))
	srv.PutObject(testBucket, "b/changed.txt", []byte("old"))
	srv.PutObject(testBucket, "b/stale.txt", []byte("stale"))
	src, dst := RemoteSide(URL{Bucket: testBucket, Object: "a"}), prefixB
	o := SyncOptions{Delete: true, MaxDelete: MaxDeletePercent(100)}

	plan, err := c.PlanSync(context.Background(), src, dst, o)
	if err != nil || len(plan.Copies) != 2 || len(plan.Deletes) != 1 || plan.Unchanged != 1 {
		t.Fatalf("plan: %+v, %v", plan, err)
	}
	rep, err := c.Sync(context.Background(), src, dst, o)
	if err != nil || rep.Copied != 2 || rep.Deleted != 1 || rep.Unchanged != 1 || rep.Failed != 0 {
		t.Fatalf("sync: %+v, %v", rep, err)
	}
	wantObject(t, srv, "b/big.bin", big)
	wantObject(t, srv, "b/changed.txt", []byte("new"))
	if got := objectNames(t, srv); got != "a/big.bin a/changed.txt a/sub/same.txt b/big.bin b/changed.txt b/sub/same.txt" {
		t.Errorf("objects %q", got)
	}
	if st := srv.Stats(); st.BytesRewritten != int64(len(big))+3 {
		t.Errorf("%d bytes rewritten, want the two copies' %d", st.BytesRewritten, len(big)+3)
	}
	if n := srv.Count("storage.objects.insert"); n != 0 {
		t.Errorf("%d uploads: a sync between prefixes copies on the server", n)
	}
	if got := rs.byStatus(StatusCopied); len(got) != 2 {
		t.Errorf("copied results %q", got)
	}

	rewrites := srv.Count("storage.objects.rewrite")
	rep, err = c.Sync(context.Background(), src, dst, o)
	if err != nil || rep.Copied != 0 || rep.Deleted != 0 || rep.Unchanged != 3 {
		t.Errorf("second sync: %+v, %v", rep, err)
	}
	if n := srv.Count("storage.objects.rewrite"); n != rewrites {
		t.Errorf("the second sync made %d rewrite calls, want none", n-rewrites)
	}
}

// Two prefixes of one bucket where one holds the other are refused before
// anything is read: gs://b/p/sub to gs://b/p copied sub/sub/x over sub/x
// before reading it (its only copy lost, without --delete), and gs://b/p to
// gs://b/p/sub with --delete deleted a source object (found in review).
func TestSyncAcrossOverlapRefused(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	c, _ := syncClient(t, srv, func(o *Options) { o.Parallelism = 1 })
	srv.PutObject(testBucket, "p/sub/x", []byte("the only copy"))
	srv.PutObject(testBucket, "p/sub/sub/x", []byte("other"))
	srv.PutObject(testBucket, "p/sub/y", []byte("y"))
	for _, tc := range []struct{ src, dst string }{{"p/sub", "p"}, {"p", "p/sub"}, {"", "p"}, {"p", "p"}} {
		src, dst := RemoteSide(URL{Bucket: testBucket, Object: tc.src}), RemoteSide(URL{Bucket: testBucket, Object: tc.dst})
		_, err := c.Sync(context.Background(), src, dst, SyncOptions{Delete: true, MaxDelete: MaxDeletePercent(100)})
		if !errors.Is(err, ErrBadOption) || !strings.Contains(err.Error(), "overlap") {
			t.Errorf("sync %q to %q: %v; want ErrBadOption naming the overlap", tc.src, tc.dst, err)
		}
	}
	if got := objectNames(t, srv); got != "p/sub/sub/x p/sub/x p/sub/y" {
		t.Errorf("objects after the refusals: %q", got)
	}
	if b, _, _ := srv.Object(testBucket, "p/sub/x"); string(b) != "the only copy" {
		t.Errorf("p/sub/x holds %q", b)
	}
	// Another bucket, or a sibling prefix, is not an overlap.
	if _, err := c.Sync(context.Background(), RemoteSide(URL{Bucket: testBucket, Object: "p/sub"}), RemoteSide(URL{Bucket: testBucket, Object: "p/subway"}), SyncOptions{}); err != nil {
		t.Errorf("sync p/sub to p/subway: %v", err)
	}
}
