package upload

import (
	"bytes"
	"context"
	"hash/crc32"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

// CopyPrefix carries the call's keys: it reads each source with A and
// writes each copy under B, on a keyless Client.
func TestCallKeysCopyPrefix(t *testing.T) {
	srv := newServer(t, fakegcs.Options{Buckets: []string{"dst"}})
	c := newClient(t, srv, nil)
	ctx := context.Background()
	dir := t.TempDir()
	files := map[string][]byte{"a": randBytes(300<<10, 75), "b": randBytes(10, 76)}
	for n, b := range files {
		writeTemp(t, dir, n, b)
	}
	if _, err := c.UploadDir(ctx, dir, URL{Bucket: testBucket, Object: "p/"}, UploadOptions{Encryption: &Encryption{Key: callKeyA}}); err != nil {
		t.Fatal(err)
	}
	ab := &Encryption{Key: callKeyB, DecryptionKeys: []resumable.EncryptionKey{callKeyA}}
	if rs, err := c.CopyPrefix(ctx, URL{Bucket: testBucket, Object: "p/"}, URL{Bucket: "dst", Object: "q/"}, CopyOptions{Encryption: ab}); err != nil || len(rs) != 2 {
		t.Fatalf("copy prefix: %d results, %v", len(rs), err)
	}
	for n, b := range files {
		if got := keyOf(t, srv, "dst", "q/"+n); got != callKeyB.SHA256() {
			t.Errorf("q/%s under %q, want key B", n, got)
		}
		if got, err := readWith(c, URL{Bucket: "dst", Object: "q/" + n}, &Encryption{Key: callKeyB}); err != nil || !bytes.Equal(got, b) {
			t.Errorf("q/%s read under B: %v", n, err)
		}
	}
}

// A CopyPrefix of objects under a customer-supplied key checks each copy
// against its source's CRC32C, which a listing hides for such an object:
// it is read with the key first. (It compared with 0, and failed every
// copy it had made with a checksum mismatch.)
func TestCopyPrefixCSEKSourceChecked(t *testing.T) {
	srv := newServer(t, fakegcs.Options{Buckets: []string{"dst"}})
	c := newClient(t, srv, func(o *Options) { o.EncryptionKey = callKeyA })
	data := randBytes(1000, 83)
	src := writeTemp(t, t.TempDir(), "a", data)
	ctx := context.Background()
	if _, err := c.UploadFile(ctx, src, URL{Bucket: testBucket, Object: "p/a"}, UploadOptions{}); err != nil {
		t.Fatal(err)
	}
	c2 := newClient(t, srv, func(o *Options) { o.EncryptionKey, o.DecryptionKeys = callKeyB, []resumable.EncryptionKey{callKeyA} })
	rs, err := c2.CopyPrefix(ctx, URL{Bucket: testBucket, Object: "p/"}, URL{Bucket: "dst", Object: "q/"}, CopyOptions{})
	if err != nil || len(rs) != 1 || rs[0].Status != StatusCopied || rs[0].CRC32C != crc32.Checksum(data, castagnoli) {
		t.Fatalf("copy prefix: %+v, %v", rs, err)
	}
	if got := keyOf(t, srv, "dst", "q/a"); got != callKeyB.SHA256() {
		t.Errorf("q/a under %q, want key B", got)
	}
}

// CopyAll (cp) with a wildcard carries the call's keys too: each listed
// CSEK source is read with A and its copy written under B.
func TestCallKeysCopyAllWildcard(t *testing.T) {
	srv := newServer(t, fakegcs.Options{Buckets: []string{"dst"}})
	c := newClient(t, srv, nil)
	ctx := context.Background()
	files := map[string][]byte{"x.log": randBytes(70<<10, 85), "y.log": randBytes(9, 86)}
	for n, b := range files {
		if _, err := c.UploadReader(ctx, bytes.NewReader(b), URL{Bucket: testBucket, Object: "l/" + n}, UploadOptions{Encryption: &Encryption{Key: callKeyA}}); err != nil {
			t.Fatal(err)
		}
	}
	ab := &Encryption{Key: callKeyB, DecryptionKeys: []resumable.EncryptionKey{callKeyA}}
	rs, err := c.CopyAll(ctx, []string{"gs://" + testBucket + "/l/*.log"}, "gs://dst/c/", CopyAllOptions{Encryption: ab})
	if err != nil || len(rs) != 2 {
		t.Fatalf("cp: %d results, %v", len(rs), err)
	}
	for n, b := range files {
		if got := keyOf(t, srv, "dst", "c/"+n); got != callKeyB.SHA256() {
			t.Errorf("c/%s under %q, want key B", n, got)
		}
		if got, err := readWith(c, URL{Bucket: "dst", Object: "c/" + n}, &Encryption{Key: callKeyB}); err != nil || !bytes.Equal(got, b) {
			t.Errorf("c/%s read under B: %v", n, err)
		}
	}
}
