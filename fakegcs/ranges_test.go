package fakegcs_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/fakegcs"
)

// wholeHash is the x-goog-hash GCS sends for data: the hashes of the whole
// object, whatever range a response carries.
func wholeHash(data []byte) string {
	sum := md5.Sum(data)
	return "crc32c=" + crcB64(data) + ",md5=" + base64.StdEncoding.EncodeToString(sum[:])
}

// The ranged reads a sliced download makes, on every download path: 206
// with Content-Range "bytes A-B/SIZE", Content-Length B-A+1, x-goog-hash of
// the whole object and its generation; a range that starts past the end is
// 416 "bytes */SIZE" with GCS's JSON error; a read pinned to a generation
// that was replaced is 404.
func TestRangedReadsForSlices(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	data := randBytes(1000, 7)
	a, _ := srv.PutObject("bkt", "o", data)
	gen := fmt.Sprint(a.Generation)
	paths := []string{"/storage/v1/b/bkt/o/o?alt=media", "/download/storage/v1/b/bkt/o/o?alt=media", "/bkt/o",
		"/storage/v1/b/bkt/o/o?alt=media&generation=" + gen, "/bkt/o?generation=" + gen}
	for _, path := range paths {
		for _, sl := range [][2]int{{0, 99}, {100, 599}, {600, 999}, {990, 1500}} {
			end := min(sl[1], 999)
			r := do(t, srv, "GET", path, nil, fmt.Sprintf("Range: bytes=%d-%d", sl[0], sl[1]))
			if r.status != 206 || r.body != string(data[sl[0]:end+1]) ||
				r.header.Get("Content-Range") != fmt.Sprintf("bytes %d-%d/1000", sl[0], end) ||
				r.header.Get("Content-Length") != fmt.Sprint(end-sl[0]+1) ||
				r.header.Get("X-Goog-Hash") != wholeHash(data) || r.header.Get("X-Goog-Generation") != gen ||
				r.header.Get("X-Goog-Stored-Content-Length") != "1000" {
				t.Errorf("%s %v: %d, %d bytes, headers %v", path, sl, r.status, len(r.body), r.header)
			}
		}
	}
	r := do(t, srv, "GET", paths[0], nil, "Range: bytes=1000-")
	if e, _ := parseAPIError(r.body); r.status != 416 || r.header.Get("Content-Range") != "bytes */1000" ||
		e.Error.Message != "The requested range cannot be satisfied." || e.Error.Errors[0].Reason != "requestedRangeNotSatisfiable" {
		t.Errorf("past the end: %d %q %s", r.status, r.header.Get("Content-Range"), r.body)
	}
	if _, err := srv.PutObject("bkt", "o", []byte("replaced")); err != nil {
		t.Fatal(err)
	}
	for _, path := range paths[3:] {
		r := do(t, srv, "GET", path, nil, "Range: bytes=0-99")
		if r.status != 404 || !bytes.Contains([]byte(r.body), []byte("No such object: bkt/o#"+gen)) {
			t.Errorf("%s after the overwrite: %d %s, want 404", path, r.status, r.body)
		}
	}
}

// A sliced download through the official client: concurrent range readers
// pinned to one generation reassemble the object; once that generation is
// replaced, a slice reader fails with ErrObjectNotExist.
func TestSlicedDownloadWithClient(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	c := newClient(t, srv)
	data := randBytes(3*256<<10+17, 9)
	a, _ := srv.PutObject("bkt", "o", data)
	obj := c.Bucket("bkt").Object("o").Generation(a.Generation)
	const slices = 4
	size := int64(len(data))
	got := make([]byte, size)
	var wg sync.WaitGroup
	for i := range int64(slices) {
		off, end := i*size/slices, (i+1)*size/slices
		wg.Go(func() {
			r, err := obj.NewRangeReader(context.Background(), off, end-off)
			if err != nil {
				t.Error(err)
				return
			}
			defer r.Close()
			if r.Attrs.Size != size || r.Attrs.StartOffset != off || r.Attrs.Generation != a.Generation {
				t.Errorf("slice %d: attrs %+v", i, r.Attrs)
			}
			if _, err := io.ReadFull(r, got[off:end]); err != nil {
				t.Errorf("slice %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if !bytes.Equal(got, data) {
		t.Fatal("slices do not reassemble the object")
	}
	if _, err := srv.PutObject("bkt", "o", []byte("replaced")); err != nil {
		t.Fatal(err)
	}
	if _, err := obj.NewRangeReader(context.Background(), 0, 10); !errors.Is(err, storage.ErrObjectNotExist) {
		t.Fatalf("slice of a replaced generation: %v, want ErrObjectNotExist", err)
	}
}

// Decompressive transcoding serves the whole decompressed object with 200
// whatever the Range, without Content-Length and with the stored object's
// hashes; a client that accepts gzip gets the stored bytes, ranged. An
// object whose Cache-Control has no-transform is never transcoded. The same
// on a capped connection, whose writer cannot sendfile.
func TestTranscodingIgnoresRange(t *testing.T) {
	for _, capRate := range []int64{0, 1 << 30} {
		t.Run(fmt.Sprint("cap ", capRate), func(t *testing.T) { testTranscodingIgnoresRange(t, capRate) })
	}
}

func testTranscodingIgnoresRange(t *testing.T, capRate int64) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, CapRate: capRate})
	plain := bytes.Repeat([]byte("plain text, compressed. "), 40)
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(plain)
	zw.Close()
	stored := zb.Bytes()
	for _, name := range []string{"z", "nt"} {
		cc := map[string]string{"z": "public, max-age=60", "nt": "public, no-transform"}[name]
		if _, err := srv.PutObjectFrom(fakegcs.ObjectAttrs{Bucket: "bkt", Name: name, ContentEncoding: "gzip", CacheControl: cc}, bytes.NewReader(stored)); err != nil {
			t.Fatal(err)
		}
	}
	get := func(path, acceptEncoding string) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", srv.URL()+path, nil)
		req.Header.Set("Range", "bytes=0-9")
		req.Header.Set("Accept-Encoding", acceptEncoding) // set, so Go's transport does not decompress
		res, err := srv.Client().Transport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res, body
	}
	for _, path := range []string{"/bkt/z", "/storage/v1/b/bkt/o/z?alt=media"} {
		res, body := get(path, "identity")
		if res.StatusCode != 200 || !bytes.Equal(body, plain) || res.ContentLength != -1 || res.Header.Get("Content-Range") != "" ||
			res.Header.Get("Content-Encoding") != "" || res.Header.Get("X-Goog-Hash") != wholeHash(stored) {
			t.Errorf("%s transcoded: %d, %d bytes, headers %v", path, res.StatusCode, len(body), res.Header)
		}
		res, body = get(path, "gzip")
		if res.StatusCode != 206 || !bytes.Equal(body, stored[:10]) || res.Header.Get("Content-Encoding") != "gzip" ||
			res.Header.Get("Content-Range") != fmt.Sprintf("bytes 0-9/%d", len(stored)) {
			t.Errorf("%s as stored: %d, %d bytes, headers %v", path, res.StatusCode, len(body), res.Header)
		}
	}
	if res, body := get("/bkt/nt", "identity"); res.StatusCode != 206 || !bytes.Equal(body, stored[:10]) || res.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("no-transform: %d, %d bytes, headers %v", res.StatusCode, len(body), res.Header)
	}
}
