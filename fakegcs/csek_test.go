package fakegcs_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/gcsput/gcsput/fakegcs"
)

var (
	csekKey   = bytes.Repeat([]byte{7}, 32)
	csekOther = bytes.Repeat([]byte{9}, 32)
)

func keySHA(k []byte) string {
	s := sha256.Sum256(k)
	return base64.StdEncoding.EncodeToString(s[:])
}

// writeKeyed writes data under key with the official client's Writer:
// resumable in chunks of chunk bytes (every chunk carries the key), or in
// one multipart request when chunk is 0.
func writeKeyed(t *testing.T, c *storage.Client, name string, key, data []byte, chunk int) {
	t.Helper()
	w := c.Bucket("bkt").Object(name).Key(key).NewWriter(context.Background())
	w.ChunkSize = chunk
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("write %s: %v", name, err)
	}
}

// An object written under a CSEK keeps the key's SHA256 and reports it in
// customerEncryption; its content is served with that key only, ranges
// included, and GCS's errors answer a missing or wrong key; its metadata is
// served without the key, but not its hashes.
func TestCSEKReadsNeedTheKey(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	c := newClient(t, srv)
	ctx := context.Background()
	data := randBytes(600<<10, 1)
	for _, chunk := range []int{0, 256 << 10} {
		name := "multipart"
		if chunk > 0 {
			name = "resumable"
		}
		t.Run(name, func(t *testing.T) {
			writeKeyed(t, c, name, csekKey, data, chunk)
			a, err := srv.Attrs("bkt", name)
			if err != nil || a.CustomerKeySHA256 != keySHA(csekKey) {
				t.Fatalf("stored key hash %q (%v), want %q", a.CustomerKeySHA256, err, keySHA(csekKey))
			}
			o := c.Bucket("bkt").Object(name)
			if got := readAll(t, o.Key(csekKey), 100, 1000); !bytes.Equal(got, data[100:1100]) {
				t.Fatalf("range with the key: %d bytes, not the object's", len(got))
			}
			_, err = o.NewReader(ctx)
			if code, msg := apiErrOrXML(err); code != 400 || !strings.Contains(msg, "customer-supplied encryption key") {
				t.Fatalf("read without the key: %d %q (%v), want 400 about the customer-supplied key", code, msg, err)
			}
			_, err = o.Key(csekOther).NewRangeReader(ctx, 10, 10)
			if code, msg := apiErrOrXML(err); code != 400 || !strings.Contains(msg, "The provided encryption key is incorrect.") {
				t.Fatalf("read with another key: %d %q (%v)", code, msg, err)
			}
			bare, err := o.Attrs(ctx)
			if err != nil || bare.CustomerKeySHA256 != keySHA(csekKey) || bare.CRC32C != 0 || len(bare.MD5) != 0 {
				t.Fatalf("metadata without the key: key %q crc %d md5 %x (%v): want the key hash and no hashes", bare.CustomerKeySHA256, bare.CRC32C, bare.MD5, err)
			}
			keyed, err := o.Key(csekKey).Attrs(ctx)
			if err != nil || keyed.CRC32C != a.CRC32C {
				t.Fatalf("metadata with the key: crc %d (%v), want %d", keyed.CRC32C, err, a.CRC32C)
			}
			if _, err := o.Key(csekOther).Attrs(ctx); err == nil {
				t.Fatal("metadata with another key was served")
			}
		})
	}
}

func readAll(t *testing.T, o *storage.ObjectHandle, off, n int64) []byte {
	t.Helper()
	r, err := o.NewRangeReader(context.Background(), off, n)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// apiErrOrXML is apiErr for the XML API's errors too (the Go client reads
// through it), whose message is in the error's body text.
func apiErrOrXML(err error) (int, string) {
	var ge *googleapi.Error
	if errors.As(err, &ge) && ge.Message == "" {
		return ge.Code, ge.Body
	}
	return apiErr(err)
}

// A chunk of a CSEK upload with another key, or a malformed one, is
// refused. (One without a key is served: the official Go client sends the
// key with the initiation only, and its CSEK uploads work on GCS.)
func TestCSEKResumableChunksCarryTheKey(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	hc := srv.Client()
	req, _ := http.NewRequest("POST", srv.URL()+"/upload/storage/v1/b/bkt/o?uploadType=resumable&name=x", strings.NewReader("{}"))
	setKey(req.Header, "X-Goog-Encryption-", csekKey)
	resp := doReq(t, hc, req)
	loc := resp.Header.Get("Location")
	for _, tc := range []struct {
		key    []byte
		status int
		reason string
	}{
		{csekOther, 400, "customerEncryptionKeyIsIncorrect"},
		{[]byte("short"), 400, "customerEncryptionKeyFormatIsInvalid"},
		{csekKey, 200, ""},
	} {
		req, _ := http.NewRequest("PUT", loc, strings.NewReader("abc"))
		req.Header.Set("Content-Range", "bytes 0-2/3")
		if tc.key != nil {
			setKey(req.Header, "X-Goog-Encryption-", tc.key)
		}
		resp := doReq(t, hc, req)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.reason) {
			t.Fatalf("chunk with key %x: %d %s, want %d %s", tc.key, resp.StatusCode, body, tc.status, tc.reason)
		}
	}
}

func setKey(h http.Header, prefix string, key []byte) {
	h.Set(prefix+"Algorithm", "AES256")
	h.Set(prefix+"Key", base64.StdEncoding.EncodeToString(key))
	h.Set(prefix+"Key-Sha256", keySHA(key))
	if len(key) != 32 { // a malformed key, with a hash that matches it
		h.Set(prefix+"Key", base64.StdEncoding.EncodeToString(key))
	}
}

func doReq(t *testing.T, hc *http.Client, req *http.Request) *http.Response {
	t.Helper()
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// A rewrite or copy needs its source's key (X-Goog-Copy-Source-Encryption-*)
// and encrypts its destination with its own key, if any; a compose needs
// the key of its CSEK sources, which encrypts the result.
func TestCSEKRewriteAndCompose(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	c := newClient(t, srv)
	ctx := context.Background()
	writeKeyed(t, c, "src", csekKey, []byte("secret bytes"), 0)
	bkt := c.Bucket("bkt")
	_, err := bkt.Object("dst").CopierFrom(bkt.Object("src")).Run(ctx)
	if code, msg := apiErr(err); code != 400 || !strings.Contains(msg, "encrypted by a customer-supplied encryption key") {
		t.Fatalf("rewrite without the source key: %d %q", code, msg)
	}
	_, err = bkt.Object("dst").CopierFrom(bkt.Object("src").Key(csekOther)).Run(ctx)
	if code, msg := apiErr(err); code != 400 || msg != "The provided encryption key is incorrect." {
		t.Fatalf("rewrite with another source key: %d %q", code, msg)
	}
	a, err := bkt.Object("dst").Key(csekOther).CopierFrom(bkt.Object("src").Key(csekKey)).Run(ctx)
	if err != nil || a.CustomerKeySHA256 != keySHA(csekOther) {
		t.Fatalf("rewrite under a new key: %+v, %v", a, err)
	}
	if got := readAll(t, bkt.Object("dst").Key(csekOther), 0, -1); string(got) != "secret bytes" {
		t.Fatalf("rewritten object reads %q", got)
	}
	_, err = bkt.Object("both").ComposerFrom(bkt.Object("src"), bkt.Object("src")).Run(ctx)
	if code, _ := apiErr(err); code != 400 {
		t.Fatalf("compose without the key: %v", err)
	}
	a, err = bkt.Object("both").Key(csekKey).ComposerFrom(bkt.Object("src"), bkt.Object("src")).Run(ctx)
	if err != nil || a.CustomerKeySHA256 != keySHA(csekKey) {
		t.Fatalf("compose with the key: %+v, %v", a, err)
	}
}

// A KMS key name given at insert is recorded and reported; a CSEK with it
// is refused.
func TestKMSKeyNameRecorded(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	c := newClient(t, srv)
	const kms = "projects/p/locations/global/keyRings/r/cryptoKeys/k"
	w := c.Bucket("bkt").Object("k").NewWriter(context.Background())
	w.KMSKeyName = kms
	w.ChunkSize = 0
	_, _ = w.Write([]byte("x"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := c.Bucket("bkt").Object("k").Attrs(context.Background())
	if err != nil || a.KMSKeyName != kms {
		t.Fatalf("kmsKeyName %q (%v), want %q", a.KMSKeyName, err, kms)
	}
	w = c.Bucket("bkt").Object("k2").Key(csekKey).NewWriter(context.Background())
	w.KMSKeyName = kms
	_, _ = w.Write([]byte("x"))
	if err := w.Close(); err == nil {
		t.Fatal("an insert with both a CSEK and a KMS key was accepted")
	}
}

// A requester-pays bucket refuses a request without userProject with GCS's
// 400 and serves one with it; Stats count the requests billed per project.
func TestRequesterPays(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{RequesterPays: []string{"rpay"}, Buckets: []string{"free"}})
	if _, err := srv.PutObject("rpay", "o", []byte("data")); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, srv)
	ctx := context.Background()
	_, err := c.Bucket("rpay").Object("o").Attrs(ctx)
	if code, msg := apiErr(err); code != 400 || msg != "Bucket is a requester pays bucket but no user project provided." {
		t.Fatalf("without userProject: %d %q", code, msg)
	}
	if got := readAll(t, c.Bucket("rpay").UserProject("payer").Object("o"), 0, -1); string(got) != "data" {
		t.Fatalf("with userProject: %q", got)
	}
	if _, err := c.Bucket("free").Attrs(ctx); err != nil {
		t.Fatal(err)
	}
	attrs, err := c.Bucket("rpay").UserProject("payer").Attrs(ctx)
	if err != nil || !attrs.RequesterPays {
		t.Fatalf("bucket attrs: requesterPays %v (%v)", attrs != nil && attrs.RequesterPays, err)
	}
	if got := srv.Stats().Billed; got["payer"] != 2 || len(got) != 1 {
		t.Fatalf("billed %v, want payer: 2", got)
	}
	if _, err := c.Bucket("rpay").UserProject("payer").Update(ctx, storage.BucketAttrsToUpdate{RequesterPays: false}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Bucket("rpay").Object("o").Attrs(ctx); err != nil {
		t.Fatalf("after requester pays was turned off: %v", err)
	}
}
