package resumable

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
)

var testKey = EncryptionKey(bytes.Repeat([]byte{0x5a}, 32))

// A CSEK upload sends the key with the initiation, every chunk and every
// status query; the saved session holds the key's SHA256, never the key; a
// resume without the key is refused before any request, naming the key's
// SHA256 prefix; with the key it finishes, and the object reads back with
// the key only, slice by slice.
func TestEncryptionKeyUploadResumeDownload(t *testing.T) {
	const size = 4*kib256 + 777
	data := testData(size)
	e := newEnv(t, kib256)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var saved []byte
	e.hook = func(ev Event) {
		if ev.Kind == EventChunk && ev.Persisted >= 2*kib256 && saved == nil {
			saved = e.mustSave(t)
			cancel()
		}
	}
	s, err := e.c.Start(ctx, ObjectSpec{Bucket: "bkt", Name: "o", Size: size, Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	e.cur = s
	if _, err := e.c.Upload(ctx, s, bytes.NewReader(data)); !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v", err)
	}
	for _, secret := range [][]byte{testKey, []byte(base64.StdEncoding.EncodeToString(testKey))} {
		if bytes.Contains(saved, secret) {
			t.Fatalf("the saved session holds the key: %s", saved)
		}
	}
	restored, err := ParseSession(saved)
	if err != nil || restored.KeySHA256 != testKey.SHA256() {
		t.Fatalf("restored key hash %q (%v), want %q", restored.KeySHA256, err, testKey.SHA256())
	}
	e2 := newEnvOn(t, kib256, e.srv)
	e.srv.ResetStats()
	_, err = e2.c.Upload(context.Background(), restored, bytes.NewReader(data))
	if !errors.Is(err, ErrEncryptionKey) || !strings.Contains(err.Error(), ShortSHA256(testKey.SHA256())) {
		t.Fatalf("resume without the key: %v, want ErrEncryptionKey naming %s", err, ShortSHA256(testKey.SHA256()))
	}
	if n := len(e.srv.Log()); n != 0 {
		t.Fatalf("a resume without the key sent %d requests", n)
	}
	restored.Key = testKey
	obj, err := e2.c.Upload(context.Background(), restored, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	log := e.srv.Log()
	for _, r := range log {
		if r.KeySHA256 != testKey.SHA256() {
			t.Fatalf("%s %s (%s) carried no key", r.Method, r.Phase, r.ContentRange)
		}
	}
	if len(log) < 3 || log[0].Phase != "status" {
		t.Fatalf("resume log %+v: want a status query then chunks", log)
	}

	var buf bytes.Buffer
	if _, err := e2.c.Download(context.Background(), DownloadSpec{Bucket: "bkt", Object: "o"}, &buf); err == nil ||
		!strings.Contains(err.Error(), "encrypted by a customer-supplied encryption key") {
		t.Fatalf("download without the key: %v", err)
	}
	got := make(sliceBuf, size)
	for _, sl := range [][2]int64{{0, 1000}, {1000, size}} {
		_, err := e2.c.DownloadAt(context.Background(), DownloadSpec{Bucket: "bkt", Object: "o", Generation: obj.Generation,
			Start: sl[0], End: sl[1], Key: testKey}, got)
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, data) {
		t.Fatal("the slices read back differ from the upload")
	}
}

type sliceBuf []byte

func (b sliceBuf) WriteAt(p []byte, off int64) (int, error) { return copy(b[off:], p), nil }

// A key never prints: not in %v, %s, %x or %#v of the key or its session.
func TestEncryptionKeyNeverPrints(t *testing.T) {
	s := &Session{URI: "http://h/x?upload_id=1", Bucket: "b", Object: "o", Key: testKey, KeySHA256: testKey.SHA256()}
	for _, f := range []string{"%v", "%s", "%x", "%#v", "%+v"} {
		for _, v := range []any{testKey, s} {
			out := strings.ToLower(fmt.Sprintf(f, v))
			if strings.Contains(out, "5a5a5a") || strings.Contains(out, strings.ToLower(base64.StdEncoding.EncodeToString(testKey))) {
				t.Fatalf("%s of %T printed the key: %s", f, v, out)
			}
		}
	}
}
