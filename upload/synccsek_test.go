package upload

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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

// With a Cloud KMS key to write with, an object under another key (none,
// another KMS key, a CSEK) is a change, re-written under it; one under it
// is compared by its CRC32C as any, whose name GCS reports with the key's
// version. Without a key, an object under a KMS key (a bucket's default,
// say) is compared by its content alone.
func TestSyncUploadKMS(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	src := t.TempDir()
	writeTemp(t, src, "a.txt", []byte("alpha"))
	writeTemp(t, src, "b.txt", []byte("bravo"))
	ctx, dst := context.Background(), prefixB
	const k1, k2 = "projects/p/locations/global/keyRings/r/cryptoKeys/k1", "projects/p/locations/global/keyRings/r/cryptoKeys/k2"
	srv.PutObject(testBucket, "b/a.txt", []byte("alpha"))
	putKeyed(t, srv, "b/b.txt", []byte("bravo"), syncKey1)
	kmsOf := func(name string) string {
		a, err := srv.Attrs(testBucket, name)
		if err != nil {
			t.Fatal(err)
		}
		return a.KMSKeyName + "|" + a.CustomerKeySHA256
	}
	for i, tc := range []struct {
		kms           string
		copied, same  int
		wantA, wantB  string
		versionSuffix bool
	}{
		{kms: k1, copied: 2, wantA: k1 + "|", wantB: k1 + "|"}, // plain and CSEK: re-written under k1
		{kms: k1, same: 2, wantA: k1 + "|", wantB: k1 + "|"},
		{kms: k1, same: 2, versionSuffix: true},                // as GCS reports it: .../k1/cryptoKeyVersions/1
		{kms: k2, copied: 2, wantA: k2 + "|", wantB: k2 + "|"}, // another KMS key
		{kms: "", same: 2, wantA: k2 + "|", wantB: k2 + "|"},   // no key: the content is the same
	} {
		if tc.versionSuffix {
			for _, name := range []string{"b/a.txt", "b/b.txt"} {
				data, _, _ := srv.Object(testBucket, name)
				if _, err := srv.PutObjectFrom(fakegcs.ObjectAttrs{Bucket: testBucket, Name: name, KMSKeyName: k1 + "/cryptoKeyVersions/1"}, bytes.NewReader(data)); err != nil {
					t.Fatal(err)
				}
			}
		}
		c, _ := syncClient(t, srv, func(o *Options) { o.KMSKeyName = tc.kms })
		rep, err := c.Sync(ctx, LocalSide(src), dst, SyncOptions{})
		if err != nil || rep.Copied != tc.copied || rep.Unchanged != tc.same {
			t.Errorf("%d: sync with KMS key %q: %+v, %v; want %d copied, %d unchanged", i, tc.kms, rep, err, tc.copied, tc.same)
		}
		if tc.wantA != "" && (kmsOf("b/a.txt") != tc.wantA || kmsOf("b/b.txt") != tc.wantB) {
			t.Errorf("%d: keys %q and %q, want %q and %q", i, kmsOf("b/a.txt"), kmsOf("b/b.txt"), tc.wantA, tc.wantB)
		}
	}
}

// A copy between prefixes by a Client with only keys to read with reads a
// CSEK source with its key and writes the copy without a customer-supplied
// key, as gsutil and gcloud do (docs/keys.md says so); with an
// EncryptionKey the copy is under it.
func TestCopyWithDecryptionKeysOnlyWritesUnencrypted(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	putKeyed(t, srv, "a/x.txt", []byte("xray"), syncKey1)
	src := URL{Bucket: testBucket, Object: "a/x.txt"}
	cd, _ := keyedSyncClient(t, srv, nil, syncKey1)
	if _, err := cd.Copy(context.Background(), src, URL{Bucket: testBucket, Object: "plain.txt"}, CopyOptions{}); err != nil {
		t.Fatal(err)
	}
	ce, _ := keyedSyncClient(t, srv, syncKey2, syncKey1)
	if _, err := ce.Copy(context.Background(), src, URL{Bucket: testBucket, Object: "keyed.txt"}, CopyOptions{}); err != nil {
		t.Fatal(err)
	}
	wantKeys(t, srv, map[string]string{"plain.txt": "", "keyed.txt": syncKey2.SHA256()})
	wantObject(t, srv, "plain.txt", []byte("xray"))
}

// The keyed metadata reads of a sync run Options.Parallelism at a time,
// not one after another in the stream: a front that holds each read until
// four are in flight together sees four (a sequential sync would wait for
// the guard's timeout at its first read, and then see one at a time).
func TestSyncKeyedReadsRunTogether(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	src := t.TempDir()
	for i := range 8 {
		name := "f" + itoa(int64(i)) + ".txt"
		writeTemp(t, src, name, []byte("same "+name))
		putKeyed(t, srv, "b/"+name, []byte("same "+name), syncKey1)
	}
	const together = 4
	var mu sync.Mutex
	inflight, most := 0, 0
	release := make(chan struct{})
	var once sync.Once
	target, _ := url.Parse(srv.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keyed := r.Method == http.MethodGet && r.Header.Get("X-Goog-Encryption-Key-Sha256") != "" && r.URL.Query().Get("alt") != "media"
		if keyed {
			mu.Lock()
			inflight++
			most = max(most, inflight)
			n := inflight
			mu.Unlock()
			if n >= together {
				once.Do(func() { close(release) })
			}
			select {
			case <-release:
			case <-time.After(10 * time.Second): // a guard: a sequential sync never gets four together
				once.Do(func() { close(release) })
			}
			defer func() { mu.Lock(); inflight--; mu.Unlock() }()
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	c, _ := syncClient(t, srv, func(o *Options) { o.Endpoint, o.EncryptionKey, o.Parallelism = front.URL, syncKey1, together })
	rep, err := c.Sync(context.Background(), LocalSide(src), prefixB, SyncOptions{})
	if err != nil || rep.Unchanged != 8 || rep.Copied != 0 {
		t.Errorf("sync: %+v, %v; want 8 unchanged", rep, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if most != together {
		t.Errorf("at most %d keyed reads in flight, want %d (Parallelism)", most, together)
	}
}
