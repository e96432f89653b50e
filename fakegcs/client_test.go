package fakegcs_test

import (
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net/http"
	"testing"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/gcsput/gcsput/fakegcs"
)

// newClient points the official client at srv with no credentials.
func newClient(t testing.TB, srv *fakegcs.Server) *storage.Client {
	t.Helper()
	c, err := storage.NewClient(context.Background(),
		option.WithEndpoint(srv.Endpoint()),
		option.WithoutAuthentication(),
		option.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func randBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// upload writes data with the official client's chunked Writer.
func upload(t testing.TB, c *storage.Client, bucket, name string, data []byte, chunk int) *storage.ObjectAttrs {
	t.Helper()
	w := c.Bucket(bucket).Object(name).NewWriter(context.Background())
	w.ChunkSize = chunk
	w.ContentType = "application/x-test"
	w.Metadata = map[string]string{"k": "v"}
	if _, err := io.Copy(w, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("upload %s: %v", name, err)
	}
	return w.Attrs()
}

func read(t testing.TB, c *storage.Client, bucket, name string, off, n int64) []byte {
	t.Helper()
	r, err := c.Bucket(bucket).Object(name).NewRangeReader(context.Background(), off, n)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return b
}

func TestClientChunkedUploadAndReads(t *testing.T) {
	for _, backend := range []string{fakegcs.BackendMemory, fakegcs.BackendDir, fakegcs.BackendDiscard} {
		t.Run(backend, func(t *testing.T) {
			srv := fakegcs.NewTest(t, fakegcs.Options{Backend: backend, Buckets: []string{"bkt"}})
			c := newClient(t, srv)
			data := randBytes(3*256<<10+1000, 1)
			if backend == fakegcs.BackendDiscard {
				data = make([]byte, len(data)) // discard serves zeros
			}
			attrs := upload(t, c, "bkt", "dir/obj", data, 256<<10)
			if attrs.Size != int64(len(data)) || attrs.CRC32C != crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)) {
				t.Fatalf("attrs size %d crc %x", attrs.Size, attrs.CRC32C)
			}
			st, ok := srv.LastSession("bkt", "dir/obj")
			if !ok || st.Chunks != 4 || st.Persisted != int64(len(data)) || st.State != "finalized" {
				t.Fatalf("session stats %+v", st)
			}
			if got := read(t, c, "bkt", "dir/obj", 0, -1); !bytes.Equal(got, data) {
				t.Fatalf("full read differs (%d bytes)", len(got))
			}
			if got := read(t, c, "bkt", "dir/obj", 1000, 300000); !bytes.Equal(got, data[1000:301000]) {
				t.Fatalf("ranged read differs (%d bytes)", len(got))
			}
			if got := read(t, c, "bkt", "dir/obj", int64(len(data))-10, -1); !bytes.Equal(got, data[len(data)-10:]) {
				t.Fatalf("tail read differs: %q", got)
			}
		})
	}
}

func TestClientAttrsUpdateListDeleteCompose(t *testing.T) {
	ctx := context.Background()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	c := newClient(t, srv)
	bkt := c.Bucket("bkt")
	for _, n := range []string{"a/1", "a/2", "a/sub/3", "b/4", "top"} {
		upload(t, c, "bkt", n, []byte("data of "+n), 256<<10)
	}
	attrs, err := bkt.Object("a/1").Attrs(ctx)
	if err != nil || attrs.Size != int64(len("data of a/1")) || attrs.ContentType != "application/x-test" || attrs.Metadata["k"] != "v" || attrs.Metageneration != 1 {
		t.Fatalf("attrs %+v, %v", attrs, err)
	}
	up, err := bkt.Object("a/1").Update(ctx, storage.ObjectAttrsToUpdate{ContentType: "text/plain", Metadata: map[string]string{"x": "y"}})
	if err != nil || up.ContentType != "text/plain" || up.Metadata["x"] != "y" || up.Metageneration != 2 || up.Generation != attrs.Generation {
		t.Fatalf("update %+v, %v", up, err)
	}

	var names, prefixes []string
	it := bkt.Objects(ctx, &storage.Query{Prefix: "a/", Delimiter: "/"})
	for {
		o, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if o.Prefix != "" {
			prefixes = append(prefixes, o.Prefix)
		} else {
			names = append(names, o.Name)
		}
	}
	if want := []string{"a/1", "a/2"}; !equal(names, want) || !equal(prefixes, []string{"a/sub/"}) {
		t.Fatalf("list: names %v prefixes %v", names, prefixes)
	}

	dst := bkt.Object("composed")
	comp, err := dst.ComposerFrom(bkt.Object("a/1"), bkt.Object("a/2")).Run(ctx)
	if err != nil || comp.ComponentCount != 2 {
		t.Fatalf("compose %+v, %v", comp, err)
	}
	want := []byte("data of a/1data of a/2")
	if got := read(t, c, "bkt", "composed", 0, -1); !bytes.Equal(got, want) {
		t.Fatalf("composed = %q", got)
	}
	if comp.CRC32C != crc32.Checksum(want, crc32.MakeTable(crc32.Castagnoli)) {
		t.Fatalf("composed crc %x", comp.CRC32C)
	}

	if err := bkt.Object("top").Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := bkt.Object("top").Attrs(ctx); !errors.Is(err, storage.ErrObjectNotExist) {
		t.Fatalf("after delete: %v", err)
	}
	// A precondition failure: DoesNotExist on an existing object.
	w := bkt.Object("a/2").If(storage.Conditions{DoesNotExist: true}).NewWriter(ctx)
	w.Write([]byte("x"))
	err = w.Close()
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || gerr.Code != http.StatusPreconditionFailed {
		t.Fatalf("precondition: %v", err)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// STORAGE_EMULATOR_HOST is the other documented way to point the client at
// an emulator (t.Setenv: this test cannot run in parallel).
func TestClientViaEmulatorHost(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	t.Setenv("STORAGE_EMULATOR_HOST", srv.Host())
	c, err := storage.NewClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	data := randBytes(2*256<<10+7, 8)
	upload(t, c, "bkt", "e", data, 256<<10)
	if got := read(t, c, "bkt", "e", 5, 10); !bytes.Equal(got, data[5:15]) {
		t.Fatalf("ranged read %q", got)
	}
	if srv.Count("storage.objects.insert") != 4 || srv.Count("storage.objects.get") != 1 {
		t.Fatalf("requests %v", srv.Stats().Requests)
	}
}
