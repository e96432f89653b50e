package upload

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

// Two test keys for the CSEK syncs.
var (
	syncKey1 = resumable.EncryptionKey(bytes.Repeat([]byte{0x51}, 32))
	syncKey2 = resumable.EncryptionKey(bytes.Repeat([]byte{0x52}, 32))
)

// keyedSyncClient is a sync client that writes with enc (nil: no key) and
// reads with enc and dec.
func keyedSyncClient(t *testing.T, srv *fakegcs.Server, enc resumable.EncryptionKey, dec ...resumable.EncryptionKey) (*Client, *results) {
	return syncClient(t, srv, func(o *Options) { o.EncryptionKey, o.DecryptionKeys = enc, dec })
}

// putKeyed stores data as name, encrypted with k (its SHA256 stored, as GCS
// stores it).
func putKeyed(t *testing.T, srv *fakegcs.Server, name string, data []byte, k resumable.EncryptionKey) {
	t.Helper()
	if _, err := srv.PutObjectFrom(fakegcs.ObjectAttrs{Bucket: testBucket, Name: name, CustomerKeySHA256: k.SHA256()}, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
}

// wantKeys fails unless each object's key SHA256 is the one given ("" for
// none).
func wantKeys(t *testing.T, srv *fakegcs.Server, want map[string]string) {
	t.Helper()
	for name, sha := range want {
		a, err := srv.Attrs(testBucket, name)
		if err != nil || a.CustomerKeySHA256 != sha {
			t.Errorf("%s: key SHA256 %q (%v), want %q", name, a.CustomerKeySHA256, err, sha)
		}
	}
}

// gets counts the storage.objects.get requests served: metadata reads and
// downloads (PhaseMedia).
func gets(srv *fakegcs.Server) (meta, media int) {
	for _, r := range srv.Log() {
		switch {
		case r.Op != "storage.objects.get":
		case r.Phase == fakegcs.PhaseMedia:
			media++
		default:
			meta++
		}
	}
	return meta, media
}

// failedWith fails unless the results hold exactly one failure per name in
// want, each error holding every text given for it.
func failedWith(t *testing.T, rs *results, want map[string][]string) {
	t.Helper()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	got := map[string]bool{}
	for _, r := range rs.all {
		if r.Status != StatusFailed {
			continue
		}
		texts, ok := want[r.Object]
		if !ok || got[r.Object] || r.Err == nil {
			t.Errorf("unexpected failure %s -> %s: %v", r.Source, r.Dest, r.Err)
			continue
		}
		got[r.Object] = true
		for _, s := range texts {
			if !strings.Contains(r.Err.Error(), s) {
				t.Errorf("%s: error %q lacks %q", r.Object, r.Err, s)
			}
		}
	}
	for name := range want {
		if !got[name] {
			t.Errorf("no failure for %s", name)
		}
	}
}

// The sync up of a tree to CSEK objects: with the key, a second run sends
// nothing (each object's CRC32C read with its key, one metadata read per
// object whose size matches); a changed file is copied; another key
// re-writes every object under it; without a key, no encrypted object is
// replaced by a plain one: each fails naming its key's SHA256 prefix and
// the flag, the rest goes on, and they keep their key.
func TestSyncUploadCSEK(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	src := t.TempDir()
	writeTemp(t, src, "a.txt", []byte("alpha"))
	writeTemp(t, src, "sub/b.txt", []byte("bravo"))
	writeTemp(t, src, "c.txt", []byte("charlie"))
	ctx, dst := context.Background(), prefixB
	sha1, sha2 := syncKey1.SHA256(), syncKey2.SHA256()
	all := func(sha string) map[string]string {
		return map[string]string{"b/a.txt": sha, "b/sub/b.txt": sha, "b/c.txt": sha}
	}

	c1, _ := keyedSyncClient(t, srv, syncKey1)
	if rep, err := c1.Sync(ctx, LocalSide(src), dst, SyncOptions{}); err != nil || rep.Copied != 3 {
		t.Fatalf("first sync: %+v, %v", rep, err)
	}
	wantKeys(t, srv, all(sha1))

	inserts := srv.Count("storage.objects.insert")
	meta0, _ := gets(srv)
	rep, err := c1.Sync(ctx, LocalSide(src), dst, SyncOptions{})
	if err != nil || rep.Copied != 0 || rep.Unchanged != 3 {
		t.Errorf("second sync with the key: %+v, %v; want 3 unchanged", rep, err)
	}
	if n := srv.Count("storage.objects.insert") - inserts; n != 0 {
		t.Errorf("the second sync with the key made %d inserts, want none", n)
	}
	if n, _ := gets(srv); n-meta0 != 3 {
		t.Errorf("the second sync made %d metadata reads, want 3 (one per CSEK object of the same size)", n-meta0)
	}

	// The same size, other bytes: a change, found with the key.
	writeTemp(t, src, "a.txt", []byte("ALPHA"))
	writeTemp(t, src, "c.txt", []byte("charlie, longer")) // a size change: no metadata read
	meta0, _ = gets(srv)
	if p, err := c1.PlanSync(ctx, LocalSide(src), dst, SyncOptions{}); err != nil || len(p.Copies) != 2 || p.Unchanged != 1 {
		t.Errorf("plan of 2 changed files: %+v, %v", p, err)
	}
	if n, _ := gets(srv); n-meta0 != 2 {
		t.Errorf("the plan made %d metadata reads, want 2 (a.txt and sub/b.txt, of the same size)", n-meta0)
	}
	if rep, err := c1.Sync(ctx, LocalSide(src), dst, SyncOptions{}); err != nil || rep.Copied != 2 || rep.Unchanged != 1 {
		t.Errorf("sync of 2 changed files: %+v, %v", rep, err)
	}
	wantObject(t, srv, "b/a.txt", []byte("ALPHA"))
	wantKeys(t, srv, all(sha1))

	// Another key: every object is re-written under it.
	c2, _ := keyedSyncClient(t, srv, syncKey2, syncKey1)
	if rep, err := c2.Sync(ctx, LocalSide(src), dst, SyncOptions{}); err != nil || rep.Copied != 3 || rep.Unchanged != 0 {
		t.Errorf("sync with another key: %+v, %v; want 3 re-written", rep, err)
	}
	wantKeys(t, srv, all(sha2))

	// No key (a cron job that lost its variable): nothing encrypted is
	// replaced, each fails clearly, the new file and the plain object go on.
	writeTemp(t, src, "new.txt", []byte("new"))
	srv.PutObject(testBucket, "b/plain.txt", []byte("old"))
	writeTemp(t, src, "plain.txt", []byte("new plain"))
	c0, rs0 := keyedSyncClient(t, srv, nil)
	inserts = srv.Count("storage.objects.insert")
	rep, err = c0.Sync(ctx, LocalSide(src), dst, SyncOptions{})
	if !errors.Is(err, ErrSomeFailed) || rep.Failed != 3 || rep.Copied != 2 {
		t.Errorf("sync without a key: %+v, %v; want 3 failed, 2 copied", rep, err)
	}
	if !errors.Is(err, ErrEncryptedDest) {
		t.Errorf("sync without a key: %v; want ErrEncryptedDest", err)
	}
	if n := srv.Count("storage.objects.insert") - inserts; n != 2 {
		t.Errorf("the sync without a key made %d inserts, want 2 (new.txt, plain.txt)", n)
	}
	wantKeys(t, srv, all(sha2))
	wantKeys(t, srv, map[string]string{"b/new.txt": "", "b/plain.txt": ""})
	wantObject(t, srv, "b/plain.txt", []byte("new plain"))
	texts := []string{"its SHA256 begins " + resumable.ShortSHA256(sha2), "--encryption-key", "$GCSPUT_ENCRYPTION_KEY", "not replaced"}
	failedWith(t, rs0, map[string][]string{"b/a.txt": texts, "b/sub/b.txt": texts, "b/c.txt": texts})

	// With --mtime, an unchanged file is known without the key.
	if rep, err := c0.Sync(ctx, LocalSide(src), dst, SyncOptions{CompareMTime: true}); err != nil || rep.Unchanged != 5 {
		t.Errorf("sync without a key, by mtime: %+v, %v; want 5 unchanged", rep, err)
	}

	// Only the key to read with: what is unchanged stays as it is; a
	// change would replace an encrypted object by a plain one, and fails.
	writeTemp(t, src, "sub/b.txt", []byte("BRAVO"))
	cd, rsd := keyedSyncClient(t, srv, nil, syncKey2)
	rep, err = cd.Sync(ctx, LocalSide(src), dst, SyncOptions{})
	if !errors.Is(err, ErrEncryptedDest) || rep.Failed != 1 || rep.Unchanged != 4 || rep.Copied != 0 {
		t.Errorf("sync with a decryption key only: %+v, %v; want 1 failed, 4 unchanged", rep, err)
	}
	failedWith(t, rsd, map[string][]string{"b/sub/b.txt": texts})
	wantKeys(t, srv, all(sha2))
}

// A sync between two prefixes of CSEK objects: with the key, a second run
// copies nothing (both sides' CRC32C read with the key); another key
// re-writes the copies under it; without the key, a source that cannot be
// read fails per object naming its key, the rest goes on; with keys to read
// only, unchanged objects stay and a change never writes a plain copy over
// an encrypted one.
func TestSyncAcrossCSEK(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	putKeyed(t, srv, "a/x.txt", []byte("xray"), syncKey1)
	putKeyed(t, srv, "a/y.txt", []byte("yankee"), syncKey1)
	ctx, src, dst := context.Background(), RemoteSide(URL{Bucket: testBucket, Object: "a"}), prefixB
	sha1, sha2 := syncKey1.SHA256(), syncKey2.SHA256()
	copies := func(sha string) map[string]string { return map[string]string{"b/x.txt": sha, "b/y.txt": sha} }

	c1, _ := keyedSyncClient(t, srv, syncKey1)
	if rep, err := c1.Sync(ctx, src, dst, SyncOptions{}); err != nil || rep.Copied != 2 {
		t.Fatalf("first sync: %+v, %v", rep, err)
	}
	wantKeys(t, srv, copies(sha1))
	rewrites := srv.Count("storage.objects.rewrite")
	meta0, _ := gets(srv)
	if rep, err := c1.Sync(ctx, src, dst, SyncOptions{}); err != nil || rep.Copied != 0 || rep.Unchanged != 2 {
		t.Errorf("second sync with the key: %+v, %v; want 2 unchanged", rep, err)
	}
	if n := srv.Count("storage.objects.rewrite") - rewrites; n != 0 {
		t.Errorf("the second sync made %d rewrites, want none", n)
	}
	if n, _ := gets(srv); n-meta0 != 4 {
		t.Errorf("the second sync made %d metadata reads, want 4 (each object on each side)", n-meta0)
	}

	c2, _ := keyedSyncClient(t, srv, syncKey2, syncKey1)
	if rep, err := c2.Sync(ctx, src, dst, SyncOptions{}); err != nil || rep.Copied != 2 {
		t.Errorf("sync with another key: %+v, %v; want 2 re-written", rep, err)
	}
	wantKeys(t, srv, copies(sha2))

	srv.PutObject(testBucket, "a/plain.txt", []byte("plain"))
	c0, rs0 := keyedSyncClient(t, srv, nil)
	rewrites = srv.Count("storage.objects.rewrite")
	rep, err := c0.Sync(ctx, src, dst, SyncOptions{})
	if !errors.Is(err, ErrSomeFailed) || rep.Failed != 2 || rep.Copied != 1 {
		t.Errorf("sync without a key: %+v, %v; want 2 failed, 1 copied", rep, err)
	}
	if n := srv.Count("storage.objects.rewrite") - rewrites; n != 1 {
		t.Errorf("the sync without a key made %d rewrites, want 1 (plain.txt)", n)
	}
	wantKeys(t, srv, copies(sha2))
	texts := []string{"its SHA256 begins " + resumable.ShortSHA256(sha1), ErrNoDecryptionKey.Error()}
	failedWith(t, rs0, map[string][]string{"b/x.txt": texts, "b/y.txt": texts})

	// Keys to read with only: unchanged objects stay, a changed one would
	// be written plain over an encrypted copy, and fails.
	putKeyed(t, srv, "a/y.txt", []byte("YANKEE"), syncKey1)
	cd, rsd := keyedSyncClient(t, srv, nil, syncKey1, syncKey2)
	rep, err = cd.Sync(ctx, src, dst, SyncOptions{})
	if !errors.Is(err, ErrEncryptedDest) || rep.Failed != 1 || rep.Unchanged != 2 || rep.Copied != 0 {
		t.Errorf("sync with decryption keys only: %+v, %v; want 1 failed, 2 unchanged", rep, err)
	}
	failedWith(t, rsd, map[string][]string{"b/y.txt": {"its SHA256 begins " + resumable.ShortSHA256(sha2), "--encryption-key"}})
	wantKeys(t, srv, copies(sha2))
}

// A sync down of CSEK objects: with the key, a second run downloads
// nothing (each object's CRC32C read with its key); without it, each
// encrypted object fails naming its key's SHA256 prefix, its local file
// untouched, and the rest goes on.
func TestSyncDownloadCSEK(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	putKeyed(t, srv, "b/x.txt", []byte("xray"), syncKey1)
	putKeyed(t, srv, "b/sub/y.txt", []byte("yankee"), syncKey1)
	ctx, dst := context.Background(), t.TempDir()
	c1, _ := keyedSyncClient(t, srv, nil, syncKey1)
	if rep, err := c1.Sync(ctx, prefixB, LocalSide(dst), SyncOptions{}); err != nil || rep.Copied != 2 {
		t.Fatalf("first sync: %+v, %v", rep, err)
	}
	meta0, media0 := gets(srv)
	if rep, err := c1.Sync(ctx, prefixB, LocalSide(dst), SyncOptions{}); err != nil || rep.Copied != 0 || rep.Unchanged != 2 {
		t.Errorf("second sync with the key: %+v, %v; want 2 unchanged", rep, err)
	}
	if meta, media := gets(srv); media != media0 || meta-meta0 != 2 {
		t.Errorf("the second sync made %d downloads and %d metadata reads, want none and 2", media-media0, meta-meta0)
	}

	// Changed with the key: downloaded.
	putKeyed(t, srv, "b/x.txt", []byte("XRAY"), syncKey1)
	if rep, err := c1.Sync(ctx, prefixB, LocalSide(dst), SyncOptions{}); err != nil || rep.Copied != 1 || rep.Unchanged != 1 {
		t.Errorf("sync of a changed object: %+v, %v", rep, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "x.txt")); string(b) != "XRAY" {
		t.Errorf("x.txt holds %q", b)
	}

	putKeyed(t, srv, "b/x.txt", []byte("xRAY"), syncKey1)
	srv.PutObject(testBucket, "b/plain.txt", []byte("plain"))
	c0, rs0 := keyedSyncClient(t, srv, nil)
	_, media0 = gets(srv)
	rep, err := c0.Sync(ctx, prefixB, LocalSide(dst), SyncOptions{})
	if !errors.Is(err, ErrSomeFailed) || !errors.Is(err, ErrNoDecryptionKey) || rep.Failed != 2 || rep.Copied != 1 {
		t.Errorf("sync without a key: %+v, %v; want 2 failed, 1 copied", rep, err)
	}
	if _, media := gets(srv); media-media0 != 1 {
		t.Errorf("the sync without a key made %d downloads, want 1 (plain.txt)", media-media0)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "x.txt")); string(b) != "XRAY" {
		t.Errorf("x.txt holds %q after a refused download", b)
	}
	texts := []string{"its SHA256 begins " + resumable.ShortSHA256(syncKey1.SHA256()), "--decryption-keys"}
	failedWith(t, rs0, map[string][]string{"b/x.txt": texts, "b/sub/y.txt": texts})
}
