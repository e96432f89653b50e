package upload_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/upload"
)

// client starts an in-process fakegcs with the bucket my-bucket and a
// Client pointed at it; stop closes both.
func client(edit func(*upload.Options)) (srv *fakegcs.Server, c *upload.Client, stop func()) {
	srv, opts := fake()
	if edit != nil {
		edit(&opts)
	}
	c, err := upload.New(context.Background(), opts)
	if err != nil {
		log.Fatal(err)
	}
	return srv, c, func() { c.Close(); srv.Close() }
}

// tempFiles writes files (path below a new directory → content) and
// returns the directory.
func tempFiles(files map[string]string) string {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	return dir
}

// NoClobber never replaces an object: an existing one makes the result
// "skipped", not failed. IfGenerationMatch pointing to 0 says the same
// as a precondition, and an existing object then fails the upload.
func ExampleClient_UploadFile() {
	_, c, stop := client(nil)
	defer stop()
	ctx := context.Background()
	dir := tempFiles(map[string]string{"a.txt": "alpha"})
	defer os.RemoveAll(dir)
	dst := upload.URL{Bucket: "my-bucket", Object: "a.txt"}

	r, err := c.UploadFile(ctx, filepath.Join(dir, "a.txt"), dst, upload.UploadOptions{})
	fmt.Println(r.Status, r.Size, err)
	r, err = c.UploadFile(ctx, filepath.Join(dir, "a.txt"), dst, upload.UploadOptions{NoClobber: true})
	fmt.Println(r.Status, r.Note, err)
	r, err = c.UploadFile(ctx, filepath.Join(dir, "a.txt"), dst, upload.UploadOptions{IfGenerationMatch: new(int64(0))})
	fmt.Println(r.Status, err != nil)
	// Output:
	// uploaded 5 <nil>
	// skipped exists <nil>
	// failed true
}

// UploadReader sends a stream of unknown length; DownloadWriter is its
// counterpart, writing an object to any io.Writer, checked end to end.
func ExampleClient_UploadReader() {
	_, c, stop := client(nil)
	defer stop()
	ctx := context.Background()
	dst := upload.URL{Bucket: "my-bucket", Object: "logs/today.log"}

	r, err := c.UploadReader(ctx, strings.NewReader("line 1\nline 2\n"), dst, upload.UploadOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Status, r.Size)

	var out bytes.Buffer
	if _, err := c.DownloadWriter(ctx, dst, &out, upload.DownloadOptions{}); err != nil {
		log.Fatal(err)
	}
	fmt.Print(out.String())
	// Output:
	// uploaded 14
	// line 1
	// line 2
}

// DownloadWriter with Decompress writes the content of an object stored
// gzip-encoded (its stored bytes still checked against its CRC32C);
// without it the object arrives as stored.
func ExampleClient_DownloadWriter() {
	srv, c, stop := client(nil)
	defer stop()
	ctx := context.Background()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("hello, gzip\n"))
	zw.Close()
	srv.PutObjectFrom(fakegcs.ObjectAttrs{Bucket: "my-bucket", Name: "hello.txt", ContentEncoding: "gzip"}, bytes.NewReader(gz.Bytes()))
	u := upload.URL{Bucket: "my-bucket", Object: "hello.txt"}

	var stored bytes.Buffer
	c.DownloadWriter(ctx, u, &stored, upload.DownloadOptions{})
	fmt.Println("as stored:", bytes.Equal(stored.Bytes(), gz.Bytes()))
	if _, err := c.DownloadWriter(ctx, u, os.Stdout, upload.DownloadOptions{Decompress: true}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// as stored: true
	// hello, gzip
}

// Upload sends a list of files, Options.Parallelism at a time, and returns
// one Result per item, in order.
func ExampleClient_Upload() {
	_, c, stop := client(func(o *upload.Options) { o.Parallelism = 2 })
	defer stop()
	dir := tempFiles(map[string]string{"a": "alpha", "b": "beta"})
	defer os.RemoveAll(dir)
	items := []upload.Item{
		{Local: filepath.Join(dir, "a"), Remote: upload.URL{Bucket: "my-bucket", Object: "x/a"}},
		{Local: filepath.Join(dir, "b"), Remote: upload.URL{Bucket: "my-bucket", Object: "x/b"}},
	}
	results, err := c.Upload(context.Background(), items, upload.UploadOptions{})
	for _, r := range results {
		fmt.Println(r.Dest, r.Status, r.Size)
	}
	fmt.Println(err)
	// Output:
	// gs://my-bucket/x/a uploaded 5
	// gs://my-bucket/x/b uploaded 4
	// <nil>
}

// UploadSeq is the streaming form of Upload: it keeps no result, each goes
// to Options.OnResult as it ends, so memory does not grow with the items.
func ExampleClient_UploadSeq() {
	var done []string
	_, c, stop := client(func(o *upload.Options) {
		o.Parallelism = 1
		o.OnResult = func(r *upload.Result) { done = append(done, r.Dest+" "+string(r.Status)) }
	})
	defer stop()
	dir := tempFiles(map[string]string{"1": "one", "2": "two", "3": "three"})
	defer os.RemoveAll(dir)
	items := func(yield func(upload.Item) bool) {
		for _, n := range []string{"1", "2", "3"} {
			if !yield(upload.Item{Local: filepath.Join(dir, n), Remote: upload.URL{Bucket: "my-bucket", Object: "n/" + n}}) {
				return
			}
		}
	}
	err := c.UploadSeq(context.Background(), items, upload.UploadOptions{})
	fmt.Println(strings.Join(done, "\n"))
	fmt.Println(err)
	// Output:
	// gs://my-bucket/n/1 uploaded
	// gs://my-bucket/n/2 uploaded
	// gs://my-bucket/n/3 uploaded
	// <nil>
}

// DownloadObjects downloads a list of objects to files of its choosing.
func ExampleClient_DownloadObjects() {
	srv, c, stop := client(nil)
	defer stop()
	srv.PutObject("my-bucket", "a", []byte("alpha"))
	srv.PutObject("my-bucket", "b", []byte("beta"))
	dir := tempFiles(nil)
	defer os.RemoveAll(dir)
	items := []upload.Item{
		{Local: filepath.Join(dir, "one"), Remote: upload.URL{Bucket: "my-bucket", Object: "a"}},
		{Local: filepath.Join(dir, "two"), Remote: upload.URL{Bucket: "my-bucket", Object: "b"}},
	}
	results, err := c.DownloadObjects(context.Background(), items, upload.DownloadOptions{})
	for _, r := range results {
		got, _ := os.ReadFile(r.Dest)
		fmt.Println(filepath.Base(r.Dest), r.Status, string(got))
	}
	fmt.Println(err)
	// Output:
	// one downloaded alpha
	// two downloaded beta
	// <nil>
}

// Copy copies on the server; NoClobber skips an existing destination, as
// it does for uploads.
func ExampleClient_Copy() {
	srv, c, stop := client(nil)
	defer stop()
	ctx := context.Background()
	srv.PutObject("my-bucket", "src", []byte("payload"))
	srv.PutObject("my-bucket", "taken", []byte("someone else's"))
	src := upload.URL{Bucket: "my-bucket", Object: "src"}

	r, err := c.Copy(ctx, src, upload.URL{Bucket: "my-bucket", Object: "dst"}, upload.CopyOptions{})
	fmt.Println(r.Status, r.Size, err)
	r, err = c.Copy(ctx, src, upload.URL{Bucket: "my-bucket", Object: "taken"}, upload.CopyOptions{NoClobber: true})
	fmt.Println(r.Status, r.Note, err)
	// Output:
	// copied 7 <nil>
	// skipped exists <nil>
}

// CopyPrefix copies every object under a folder to another.
func ExampleClient_CopyPrefix() {
	srv, c, stop := client(nil)
	defer stop()
	for _, n := range []string{"logs/a", "logs/b/c", "other"} {
		srv.PutObject("my-bucket", n, []byte(n))
	}
	results, err := c.CopyPrefix(context.Background(), upload.URL{Bucket: "my-bucket", Object: "logs"},
		upload.URL{Bucket: "my-bucket", Object: "backup/logs"}, upload.CopyOptions{})
	for _, r := range results {
		fmt.Println(r.Source, "->", r.Dest, r.Status)
	}
	fmt.Println(err)
	// Output:
	// gs://my-bucket/logs/a -> gs://my-bucket/backup/logs/a copied
	// gs://my-bucket/logs/b/c -> gs://my-bucket/backup/logs/b/c copied
	// <nil>
}

// CopyObjects copies a list of objects, each to its own destination.
func ExampleClient_CopyObjects() {
	srv, c, stop := client(nil)
	defer stop()
	srv.PutObject("my-bucket", "a", []byte("alpha"))
	items := []upload.CopyItem{
		{Src: upload.URL{Bucket: "my-bucket", Object: "a"}, Dst: upload.URL{Bucket: "my-bucket", Object: "a1"}},
		{Src: upload.URL{Bucket: "my-bucket", Object: "a"}, Dst: upload.URL{Bucket: "my-bucket", Object: "a2"}},
	}
	results, err := c.CopyObjects(context.Background(), items, upload.CopyOptions{})
	for _, r := range results {
		fmt.Println(r.Dest, r.Status)
	}
	fmt.Println(err)
	// Output:
	// gs://my-bucket/a1 copied
	// gs://my-bucket/a2 copied
	// <nil>
}

// MoveDir moves a directory's files to objects and returns their results
// in order, as UploadDir does; the emptied directories are removed.
func ExampleClient_MoveDir() {
	_, c, stop := client(nil)
	defer stop()
	dir := tempFiles(map[string]string{"a": "alpha", "sub/b": "beta"})
	defer os.RemoveAll(dir)
	results, err := c.MoveDir(context.Background(), dir, upload.URL{Bucket: "my-bucket", Object: "inbox"}, upload.MoveOptions{})
	for _, r := range results {
		fmt.Println(r.Dest, r.Status)
	}
	_, serr := os.Stat(filepath.Join(dir, "sub"))
	fmt.Println(err, errors.Is(serr, os.ErrNotExist))
	// Output:
	// gs://my-bucket/inbox/a moved
	// gs://my-bucket/inbox/sub/b moved
	// <nil> true
}

// MovePrefix moves a folder's objects to another folder (a RemoteSide) or
// into a local directory (a LocalSide).
func ExampleClient_MovePrefix() {
	srv, c, stop := client(nil)
	defer stop()
	ctx := context.Background()
	srv.PutObject("my-bucket", "in/a", []byte("alpha"))
	srv.PutObject("my-bucket", "in/b", []byte("beta"))
	dir := tempFiles(nil)
	defer os.RemoveAll(dir)

	archive := upload.RemoteSide(upload.URL{Bucket: "my-bucket", Object: "archive"})
	results, err := c.MovePrefix(ctx, upload.URL{Bucket: "my-bucket", Object: "in"}, archive, upload.MoveOptions{})
	fmt.Println(len(results), err)
	results, err = c.MovePrefix(ctx, upload.URL{Bucket: "my-bucket", Object: "archive"}, upload.LocalSide(dir), upload.MoveOptions{})
	for _, r := range results {
		fmt.Println(r.Source, "->", filepath.Base(r.Dest), r.Status)
	}
	fmt.Println(err)
	// Output:
	// 2 <nil>
	// gs://my-bucket/archive/a -> a moved
	// gs://my-bucket/archive/b -> b moved
	// <nil>
}

// MoveSeq is the streaming form: each Result goes to Options.OnResult.
func ExampleClient_MoveSeq() {
	var done []string
	srv, c, stop := client(func(o *upload.Options) {
		o.Parallelism = 1
		o.OnResult = func(r *upload.Result) { done = append(done, r.Source+" -> "+r.Dest+" "+string(r.Status)) }
	})
	defer stop()
	srv.PutObject("my-bucket", "a", []byte("alpha"))
	srv.PutObject("my-bucket", "b", []byte("beta"))
	moves := []upload.MoveItem{
		{Src: upload.RemoteSide(upload.URL{Bucket: "my-bucket", Object: "a"}), Dst: upload.RemoteSide(upload.URL{Bucket: "my-bucket", Object: "z/a"})},
		{Src: upload.RemoteSide(upload.URL{Bucket: "my-bucket", Object: "b"}), Dst: upload.RemoteSide(upload.URL{Bucket: "my-bucket", Object: "z/b"})},
	}
	err := c.MoveSeq(context.Background(), slices.Values(moves), upload.MoveOptions{})
	fmt.Println(strings.Join(done, "\n"))
	fmt.Println(err)
	// Output:
	// gs://my-bucket/a -> gs://my-bucket/z/a moved
	// gs://my-bucket/b -> gs://my-bucket/z/b moved
	// <nil>
}

// PlanSync says what a Sync would do, changing nothing.
func ExampleClient_PlanSync() {
	srv, c, stop := client(nil)
	defer stop()
	dir := tempFiles(map[string]string{"a": "alpha", "b": "beta"})
	defer os.RemoveAll(dir)
	srv.PutObject("my-bucket", "site/a", []byte("alpha"))
	srv.PutObject("my-bucket", "site/old", []byte("gone"))
	plan, err := c.PlanSync(context.Background(), upload.LocalSide(dir),
		upload.RemoteSide(upload.URL{Bucket: "my-bucket", Object: "site"}), upload.SyncOptions{Delete: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("copies", plan.NumCopies, "deletes", plan.NumDeletes, "unchanged", plan.Unchanged)
	// Output:
	// copies 1 deletes 1 unchanged 1
}

// Stat, Update and Delete act on one object, as the official client's
// ObjectHandle.Attrs, Update and Delete do.
func ExampleClient_Stat() {
	srv, c, stop := client(nil)
	defer stop()
	ctx := context.Background()
	srv.PutObject("my-bucket", "page.html", []byte("<p>hi</p>"))
	u := upload.URL{Bucket: "my-bucket", Object: "page.html"}

	if _, err := c.Update(ctx, u, storage.ObjectAttrsToUpdate{ContentType: "text/html"}, upload.UpdateOptions{}); err != nil {
		log.Fatal(err)
	}
	attrs, err := c.Stat(ctx, u)
	fmt.Println(attrs.Size, attrs.ContentType, err)
	fmt.Println(c.Delete(ctx, u, upload.DeleteOptions{}))
	_, err = c.Stat(ctx, u)
	fmt.Println(errors.Is(err, storage.ErrObjectNotExist))
	// Output:
	// 9 text/html <nil>
	// <nil>
	// true
}

// List yields objects in name order; with delimiter "/" the folders
// directly under the prefix come as prefixes.
func ExampleClient_List() {
	srv, c, stop := client(nil)
	defer stop()
	for _, n := range []string{"a/1", "a/2", "a/b/3"} {
		srv.PutObject("my-bucket", n, []byte(n))
	}
	for a, err := range c.List(context.Background(), "my-bucket", "a/", "/") {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(a.Name + a.Prefix)
	}
	// Output:
	// a/1
	// a/2
	// a/b/
}

// Compose concatenates objects of one bucket into one.
func ExampleClient_Compose() {
	srv, c, stop := client(nil)
	defer stop()
	ctx := context.Background()
	srv.PutObject("my-bucket", "p1", []byte("hello, "))
	srv.PutObject("my-bucket", "p2", []byte("world"))
	dst := upload.URL{Bucket: "my-bucket", Object: "whole"}
	if _, err := c.Compose(ctx, dst, upload.URL{Bucket: "my-bucket", Object: "p1"}, upload.URL{Bucket: "my-bucket", Object: "p2"}); err != nil {
		log.Fatal(err)
	}
	c.ReadRange(ctx, dst, 7, -1, os.Stdout)
	fmt.Println()
	// Output:
	// world
}
