package upload_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/upload"
)

// A prefix of objects under a customer-supplied key, copied between gs://
// locations with that key given: the listing carries no CRC32C for such an
// object (GCS shows it only to a request with the key), and the copy was
// checked against that missing CRC32C, so every copy, though written, was
// reported failed ("the copy's crc32c differs from its source's"). The
// source is now read with its key before the copy, as a single copy does.
func TestCopyPrefixOfCSEKObjectsVerifies(t *testing.T) {
	srv, err := fakegcs.New(fakegcs.Options{Buckets: []string{"src", "dst"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	k1 := resumable.EncryptionKey(bytes.Repeat([]byte{7}, 32))
	k2 := resumable.EncryptionKey(bytes.Repeat([]byte{9}, 32))
	client := func(o upload.Options) *upload.Client {
		o.Endpoint, o.Auth, o.NoState = srv.URL(), auth.Options{NoAuth: true}, true
		c, err := upload.New(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	ctx := context.Background()
	dir := t.TempDir()
	tree(t, dir, map[string]string{"p/a": "alpha", "p/b": "bravo"})
	if _, err := client(upload.Options{EncryptionKey: k1}).CopyAll(ctx, []string{dir + "/p"}, "gs://src/", upload.CopyAllOptions{Recursive: true}); err != nil {
		t.Fatal(err)
	}
	c := client(upload.Options{EncryptionKey: k2, DecryptionKeys: []resumable.EncryptionKey{k1}})
	results, err := c.CopyAll(ctx, []string{"gs://src/p/"}, "gs://dst/q/", upload.CopyAllOptions{Recursive: true})
	if err != nil {
		t.Errorf("CopyAll -r of CSEK objects: %v", err)
	}
	same(t, "results", statuses(results), []string{"copied gs://dst/q/p/a", "copied gs://dst/q/p/b"})
	for _, name := range []string{"q/p/a", "q/p/b"} {
		a, err := srv.Attrs("dst", name)
		if err != nil || a.CustomerKeySHA256 != k2.SHA256() {
			t.Errorf("gs://dst/%s: key %q, %v; want the new key's SHA256", name, a.CustomerKeySHA256, err)
		}
	}
}
