package upload

import (
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

// Keys given per call (UploadOptions.Encryption and the others), on a
// Client given none or others: every path of the call carries them.
var (
	callKeyA = resumable.EncryptionKey(bytes.Repeat([]byte{0x61}, 32))
	callKeyB = resumable.EncryptionKey(bytes.Repeat([]byte{0x62}, 32))
)

// keyOf is the SHA256 of the CSEK the object bucket/name is under ("" for
// none), failing the test when it is missing.
func keyOf(t *testing.T, srv *fakegcs.Server, bucket, name string) string {
	t.Helper()
	a, err := srv.Attrs(bucket, name)
	if err != nil {
		t.Fatalf("gs://%s/%s: %v", bucket, name, err)
	}
	return a.CustomerKeySHA256
}

// readWith downloads u with the call's keys e and returns its bytes.
func readWith(c *Client, u URL, e *Encryption) ([]byte, error) {
	var b bytes.Buffer
	_, err := c.DownloadWriter(context.Background(), u, &b, DownloadOptions{Encryption: e})
	return b.Bytes(), err
}

// One keyless Client copies an object under key A to one under key B in one
// call (A to read, B to write), as the official client's
// dst.Key(B).CopierFrom(src.Key(A)) does; the copy reads back under B only.
func TestCallKeysCopyReencrypts(t *testing.T) {
	srv := newServer(t, fakegcs.Options{Buckets: []string{"dst"}})
	c := newClient(t, srv, nil)
	ctx := context.Background()
	data := randBytes(700<<10, 71)
	src := writeTemp(t, t.TempDir(), "f", data)
	from, to := URL{Bucket: testBucket, Object: "s"}, URL{Bucket: "dst", Object: "d"}
	if _, err := c.UploadFile(ctx, src, from, UploadOptions{Encryption: &Encryption{Key: callKeyA}}); err != nil {
		t.Fatal(err)
	}
	if got := keyOf(t, srv, testBucket, "s"); got != callKeyA.SHA256() {
		t.Fatalf("source under %q, want key A", got)
	}
	r, err := c.Copy(ctx, from, to, CopyOptions{Encryption: &Encryption{Key: callKeyB, DecryptionKeys: []resumable.EncryptionKey{callKeyA}}})
	if err != nil || r.Status != StatusCopied || r.CRC32C != crc32.Checksum(data, castagnoli) {
		t.Fatalf("copy: %+v, %v", r, err)
	}
	if got := keyOf(t, srv, "dst", "d"); got != callKeyB.SHA256() {
		t.Fatalf("destination under %q, want key B %q", got, callKeyB.SHA256())
	}
	if got, err := readWith(c, to, &Encryption{Key: callKeyB}); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read under key B: %d bytes, %v", len(got), err)
	}
	if _, err := readWith(c, to, &Encryption{Key: callKeyA}); !errors.Is(err, ErrNoDecryptionKey) ||
		!strings.Contains(err.Error(), resumable.ShortSHA256(callKeyB.SHA256())) {
		t.Errorf("read with key A: %v, want ErrNoDecryptionKey naming key B", err)
	}
	// The Client has no key: GCS refuses the read (400).
	if _, err := readWith(c, to, nil); err == nil || !strings.Contains(err.Error(), "encrypted by a customer-supplied encryption key") {
		t.Errorf("read with the Client's keys (none): %v", err)
	}
	// The source is read with the call's keys only: the copy without them fails.
	if r, err := c.Copy(ctx, from, URL{Bucket: "dst", Object: "e"}, CopyOptions{}); !errors.Is(err, ErrNoDecryptionKey) || r.Status != StatusFailed {
		t.Errorf("copy without keys: %+v, %v", r, err)
	}
}

// A call's keys replace the Client's: a Client with key A writes under key
// B when the call gives B, and under no CSEK when the call gives an
// Encryption without keys.
func TestCallKeysReplaceClients(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	c := newClient(t, srv, func(o *Options) { o.EncryptionKey = callKeyA })
	dir := t.TempDir()
	src := writeTemp(t, dir, "f", randBytes(1000, 72))
	ctx := context.Background()
	for name, want := range map[string]struct {
		e   *Encryption
		sha string
	}{
		"client": {nil, callKeyA.SHA256()},
		"call":   {&Encryption{Key: callKeyB}, callKeyB.SHA256()},
		"none":   {&Encryption{}, ""},
	} {
		if _, err := c.UploadFile(ctx, src, URL{Bucket: testBucket, Object: name}, UploadOptions{Encryption: want.e}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := keyOf(t, srv, testBucket, name); got != want.sha {
			t.Errorf("%s: under %q, want %q", name, got, want.sha)
		}
	}
}

// An empty key given per call is an error naming the field, never "no key":
// nothing is written.
func TestCallKeysEmptyKeyRefused(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	c := newClient(t, srv, nil)
	src := writeTemp(t, t.TempDir(), "f", []byte("data"))
	ctx := context.Background()
	empty := &Encryption{Key: resumable.EncryptionKey{}}
	_, err := c.UploadFile(ctx, src, URL{Bucket: testBucket, Object: "o"}, UploadOptions{Encryption: empty})
	want := "upload: bad option: the customer-supplied encryption key is empty (set UploadOptions.Encryption.Key to nil for no key)"
	if !errors.Is(err, ErrBadOption) || err.Error() != want {
		t.Errorf("upload with an empty key: %v, want %q", err, want)
	}
	_, err = c.Sync(ctx, LocalSide(filepath.Dir(src)), RemoteSide(URL{Bucket: testBucket, Object: "s/"}), SyncOptions{Encryption: empty})
	if !errors.Is(err, ErrBadOption) || !strings.Contains(err.Error(), "SyncOptions.Encryption.Key") {
		t.Errorf("sync with an empty key: %v", err)
	}
	_, err = c.CopyAll(ctx, []string{src}, "gs://"+testBucket+"/c", CopyAllOptions{Encryption: &Encryption{KMSKeyName: " "}})
	if !errors.Is(err, ErrBadOption) || !strings.Contains(err.Error(), "CopyAllOptions.Encryption.KMSKeyName") {
		t.Errorf("cp with a blank KMS key: %v", err)
	}
	_, err = c.Move(ctx, LocalSide(src), RemoteSide(URL{Bucket: testBucket, Object: "m"}), MoveOptions{Upload: UploadOptions{Encryption: &Encryption{Key: callKeyA}}})
	if !errors.Is(err, ErrBadOption) || !strings.Contains(err.Error(), "set MoveOptions.Encryption") {
		t.Errorf("move with the upload's keys: %v", err)
	}
	if names, _ := srv.ObjectNames(testBucket); len(names) != 0 {
		t.Errorf("objects written: %q", names)
	}
	if _, err := os.Stat(src); err != nil {
		t.Errorf("the move's source: %v", err)
	}
}

// An upload under a per-call key, killed in the middle, is resumed by a
// new Client given no key when the call gives the key again: from where it
// stopped, and the object is under the call's key. Without the key the
// same call refuses (the record names the key by its SHA256) and writes
// nothing.
func TestCallKeysUploadResume(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	state := filepath.Join(t.TempDir(), "state")
	data := randBytes(DefaultSmallFileThreshold+3<<20, 73)
	src := writeTemp(t, t.TempDir(), "big", data)
	dst := URL{Bucket: testBucket, Object: "big"}
	o := UploadOptions{Encryption: &Encryption{Key: callKeyA}}
	c, ctx := stoppingClient(t, srv, state, 1<<20)
	if r, _ := c.UploadFile(ctx, src, dst, o); r.Status != StatusInterrupted || !r.Saved {
		t.Fatalf("interrupted upload: %+v", r)
	}
	c2 := newClient(t, srv, func(o *Options) { o.StateDir = state })
	r, err := c2.UploadFile(context.Background(), src, dst, UploadOptions{})
	if !errors.Is(err, resumable.ErrEncryptionKey) || !strings.Contains(err.Error(), resumable.ShortSHA256(callKeyA.SHA256())) {
		t.Fatalf("upload again without the key: %+v, %v", r, err)
	}
	if _, err := srv.Attrs(testBucket, "big"); err == nil {
		t.Fatal("the upload without the key wrote the object")
	}
	r, err = c2.UploadFile(context.Background(), src, dst, o)
	if err != nil || r.Status != StatusResumed || r.ResumedFrom == 0 || r.Transferred != r.Size-r.ResumedFrom {
		t.Fatalf("resume with the call's key: %+v, %v", r, err)
	}
	wantObject(t, srv, "big", data)
	if got := keyOf(t, srv, testBucket, "big"); got != callKeyA.SHA256() {
		t.Errorf("object under %q, want the call's key", got)
	}
}

// A composite upload under a per-call key: every component and the
// composed object are under it, on a keyless Client.
func TestCallKeysComposite(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	c := newClient(t, srv, composeOpts(256<<10, nil, nil))
	data := randBytes(1<<20+1000, 74)
	src := writeTemp(t, t.TempDir(), "big", data)
	r, err := c.UploadFile(context.Background(), src, URL{Bucket: testBucket, Object: "big"}, UploadOptions{Encryption: &Encryption{Key: callKeyA}})
	if err != nil || r.Note != "composite of 5 components" {
		t.Fatalf("upload: %+v, %v", r, err)
	}
	a := wantObject(t, srv, "big", data)
	if a.ComponentCount != 5 || a.CustomerKeySHA256 != callKeyA.SHA256() {
		t.Errorf("composite %+v, want 5 components under the call's key", a)
	}
	wantNoComponents(t, srv)
}

// Batches carry the call's keys: UploadDir writes every file under them,
// DownloadPrefix reads every object with them.
func TestCallKeysBatches(t *testing.T) {
	srv := newServer(t, fakegcs.Options{Buckets: []string{"dst"}})
	c := newClient(t, srv, nil)
	ctx := context.Background()
	dir := t.TempDir()
	files := map[string][]byte{"a": randBytes(300<<10, 75), "b": randBytes(10, 76), "c": randBytes(1, 77)}
	for n, b := range files {
		writeTemp(t, dir, n, b)
	}
	ka := &Encryption{Key: callKeyA}
	rs, err := c.UploadDir(ctx, dir, URL{Bucket: testBucket, Object: "p/"}, UploadOptions{Encryption: ka})
	if err != nil || len(rs) != 3 {
		t.Fatalf("upload dir: %d results, %v", len(rs), err)
	}
	for n := range files {
		if got := keyOf(t, srv, testBucket, "p/"+n); got != callKeyA.SHA256() {
			t.Errorf("p/%s under %q", n, got)
		}
	}
	out := t.TempDir()
	if rs, err := c.DownloadPrefix(ctx, URL{Bucket: testBucket, Object: "p/"}, out, DownloadOptions{Encryption: ka}); err != nil || len(rs) != 3 {
		t.Fatalf("download prefix: %d results, %v", len(rs), err)
	}
	for n, b := range files {
		if got, err := os.ReadFile(filepath.Join(out, n)); err != nil || !bytes.Equal(got, b) {
			t.Errorf("downloaded %s: %d bytes, %v", n, len(got), err)
		}
	}
}

// A sync under a per-call key writes under it, and a second one compares
// by the CRC32C read with it (nothing copied); the Client has no key. A
// sync without it refuses to replace the encrypted objects.
func TestCallKeysSync(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	c := newClient(t, srv, nil)
	ctx := context.Background()
	dir := t.TempDir()
	writeTemp(t, dir, "a", randBytes(2000, 78))
	writeTemp(t, dir, "b", randBytes(3000, 79))
	dst := RemoteSide(URL{Bucket: testBucket, Object: "s/"})
	o := SyncOptions{Encryption: &Encryption{Key: callKeyA}}
	rep, err := c.Sync(ctx, LocalSide(dir), dst, o)
	if err != nil || rep.Copied != 2 {
		t.Fatalf("first sync: %+v, %v", rep, err)
	}
	wantKeys := map[string]string{"s/a": callKeyA.SHA256(), "s/b": callKeyA.SHA256()}
	for n, sha := range wantKeys {
		if got := keyOf(t, srv, testBucket, n); got != sha {
			t.Errorf("%s under %q", n, got)
		}
	}
	writeTemp(t, dir, "b", randBytes(3000, 80)) // same size, other bytes
	rep, err = c.Sync(ctx, LocalSide(dir), dst, o)
	if err != nil || rep.Copied != 1 || rep.Unchanged != 1 {
		t.Fatalf("second sync: %+v, %v; want b copied, a unchanged (compared with the call's key)", rep, err)
	}
	if got := keyOf(t, srv, testBucket, "s/b"); got != callKeyA.SHA256() {
		t.Errorf("s/b under %q after the second sync", got)
	}
	writeTemp(t, dir, "a", randBytes(2001, 81))
	if _, err := c.Sync(ctx, LocalSide(dir), dst, SyncOptions{}); !errors.Is(err, ErrSomeFailed) {
		t.Errorf("sync without the key: %v, want a refused entry", err)
	}
	if got := keyOf(t, srv, testBucket, "s/a"); got != callKeyA.SHA256() {
		t.Errorf("s/a replaced by a sync without the key: under %q", got)
	}
}

// Moves carry the call's keys: a file moved up is under the key, an object
// moved across buckets is re-encrypted (read with A, written with B), and
// MoveAll does both.
func TestCallKeysMove(t *testing.T) {
	srv := newServer(t, fakegcs.Options{Buckets: []string{"dst"}})
	c := newClient(t, srv, nil)
	ctx := context.Background()
	data := randBytes(5000, 82)
	src := writeTemp(t, t.TempDir(), "f", data)
	up := URL{Bucket: testBucket, Object: "m"}
	if r, err := c.Move(ctx, LocalSide(src), RemoteSide(up), MoveOptions{Encryption: &Encryption{Key: callKeyA}}); err != nil || r.Status != StatusMoved {
		t.Fatalf("move up: %+v, %v", r, err)
	}
	if got := keyOf(t, srv, testBucket, "m"); got != callKeyA.SHA256() {
		t.Fatalf("moved object under %q", got)
	}
	ab := &Encryption{Key: callKeyB, DecryptionKeys: []resumable.EncryptionKey{callKeyA}}
	across := URL{Bucket: "dst", Object: "m2"}
	if r, err := c.Move(ctx, RemoteSide(up), RemoteSide(across), MoveOptions{Encryption: ab}); err != nil || r.Status != StatusMoved {
		t.Fatalf("move across: %+v, %v", r, err)
	}
	if got := keyOf(t, srv, "dst", "m2"); got != callKeyB.SHA256() {
		t.Errorf("moved across under %q, want key B", got)
	}
	if _, err := srv.Attrs(testBucket, "m"); err == nil {
		t.Error("the source of the move is left")
	}
	// In one bucket a move to another key is a copy that re-encrypts, not
	// objects.move (which keeps the source's key).
	if _, err := c.MoveAll(ctx, []string{"gs://dst/m2"}, "gs://dst/m3", MoveAllOptions{Encryption: &Encryption{Key: callKeyA, DecryptionKeys: []resumable.EncryptionKey{callKeyB}}}); err != nil {
		t.Fatalf("mv in the bucket: %v", err)
	}
	if got := keyOf(t, srv, "dst", "m3"); got != callKeyA.SHA256() {
		t.Errorf("mv in the bucket: under %q, want key A", got)
	}
	out := filepath.Join(t.TempDir(), "back")
	if _, err := c.MoveAll(ctx, []string{"gs://dst/m3"}, out, MoveAllOptions{Encryption: &Encryption{DecryptionKeys: []resumable.EncryptionKey{callKeyA}}}); err != nil {
		t.Fatalf("mv down: %v", err)
	}
	if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, data) {
		t.Errorf("moved down: %d bytes, %v", len(got), err)
	}
}

// A composite upload under a per-call key, interrupted with a component in
// flight, is continued by a new keyless Client when the call gives the key
// again: the saved components' sessions carry it (their records hold its
// SHA256), and every component and the composed object are under it.
func TestCallKeysCompositeResume(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(5*512<<10, 84)
	src := writeTemp(t, t.TempDir(), "big.bin", data)
	dst, stateDir := URL{Bucket: testBucket, Object: "big.bin"}, t.TempDir()
	o := UploadOptions{Encryption: &Encryption{Key: callKeyA}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newClient(t, srv, composeOpts(512<<10, nil, func(op *Options) {
		op.StateDir, op.Parallelism = stateDir, 1
		op.OnEvent = func(e resumable.Event) {
			if e.Kind == resumable.EventChunk && e.Part == 3 && e.Persisted == 256<<10 {
				cancel()
			}
		}
	}))
	if r, _ := c.UploadFile(ctx, src, dst, o); r.Status != StatusInterrupted || !r.Saved {
		t.Fatalf("interrupted run: %+v", r)
	}
	c2 := newClient(t, srv, composeOpts(512<<10, nil, func(op *Options) { op.StateDir = stateDir }))
	if _, err := c2.UploadFile(context.Background(), src, dst, UploadOptions{}); !errors.Is(err, resumable.ErrEncryptionKey) {
		t.Fatalf("continued without the key: %v", err)
	}
	r, err := c2.UploadFile(context.Background(), src, dst, o)
	if err != nil || r.Status != StatusResumed || r.Note != "composite of 5 components" {
		t.Fatalf("continued with the call's key: %+v, %v", r, err)
	}
	a := wantObject(t, srv, "big.bin", data)
	if a.CustomerKeySHA256 != callKeyA.SHA256() || a.ComponentCount != 5 {
		t.Errorf("composite %+v, want 5 components under the call's key", a)
	}
	wantNoComponents(t, srv)
}
