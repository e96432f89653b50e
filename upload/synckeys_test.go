package upload

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

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
