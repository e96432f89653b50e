package upload_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/upload"
)

// Delete deletes the live generation under the generation it reads first,
// so a retry after a lost reply cannot delete a newer object.
func ExampleClient_Delete() {
	srv, c, stop := client(nil)
	defer stop()
	ctx := context.Background()
	srv.PutObject("my-bucket", "old.log", []byte("bye"))

	err := c.Delete(ctx, upload.URL{Bucket: "my-bucket", Object: "old.log"}, upload.DeleteOptions{})
	fmt.Println(err)
	err = c.Delete(ctx, upload.URL{Bucket: "my-bucket", Object: "old.log"}, upload.DeleteOptions{})
	fmt.Println(errors.Is(err, storage.ErrObjectNotExist))
	// Output:
	// <nil>
	// true
}

// Delete with IfGenerationMatch deletes the object only while its live
// generation is the one read: an object replaced since is left, with
// GCS's 412.
func ExampleClient_Delete_ifGenerationMatch() {
	srv, c, stop := client(nil)
	defer stop()
	ctx := context.Background()
	u := upload.URL{Bucket: "my-bucket", Object: "config.json"}
	read, _ := srv.PutObject("my-bucket", "config.json", []byte(`{"v":1}`))
	srv.PutObject("my-bucket", "config.json", []byte(`{"v":2}`)) // replaced meanwhile

	err := c.Delete(ctx, u, upload.DeleteOptions{IfGenerationMatch: &read.Generation})
	fmt.Println("stale generation:", err != nil)
	now, _ := c.Stat(ctx, u)
	fmt.Println("live generation:", c.Delete(ctx, u, upload.DeleteOptions{IfGenerationMatch: &now.Generation}))
	// Output:
	// stale generation: true
	// live generation: <nil>
}

// ReadRange writes a byte range of an object to any io.Writer; n < 0
// reads to the end.
func ExampleClient_ReadRange() {
	srv, c, stop := client(nil)
	defer stop()
	ctx := context.Background()
	srv.PutObject("my-bucket", "alphabet.txt", []byte("abcdefghijklmnopqrstuvwxyz"))
	u := upload.URL{Bucket: "my-bucket", Object: "alphabet.txt"}

	n, err := c.ReadRange(ctx, u, 3, 4, os.Stdout)
	fmt.Println("", n, err)
	n, err = c.ReadRange(ctx, u, 23, -1, os.Stdout)
	fmt.Println("", n, err)
	// Output:
	// defg 4 <nil>
	// xyz 3 <nil>
}

// Remove removes many objects, or with Recursive everything under a
// prefix; Removed hears of each one.
func ExampleClient_Remove() {
	srv, c, stop := client(nil)
	defer stop()
	ctx := context.Background()
	for _, n := range []string{"tmp/a", "tmp/b/c", "keep"} {
		srv.PutObject("my-bucket", n, []byte(n))
	}

	err := c.Remove(ctx, []upload.URL{{Bucket: "my-bucket", Object: "tmp/"}}, upload.RemoveOptions{
		Recursive: true,
		Removed:   func(r upload.Removal) { fmt.Println("removed", r.URL, r.Err) },
	})
	fmt.Println(err)
	names, _ := srv.ObjectNames("my-bucket")
	fmt.Println(names)
	// Output:
	// removed gs://my-bucket/tmp/a <nil>
	// removed gs://my-bucket/tmp/b/c <nil>
	// <nil>
	// [keep]
}

// Update patches metadata; a custom key set to "" is deleted.
func ExampleClient_Update() {
	srv, c, stop := client(nil)
	defer stop()
	ctx := context.Background()
	srv.PutObject("my-bucket", "photo.jpg", []byte("jpeg"))
	u := upload.URL{Bucket: "my-bucket", Object: "photo.jpg"}

	attrs, err := c.Update(ctx, u, storage.ObjectAttrsToUpdate{
		ContentType:  "image/jpeg",
		CacheControl: "public, max-age=3600",
		Metadata:     map[string]string{"camera": "x100", "draft": "yes"},
	}, upload.UpdateOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(attrs.ContentType, "|", attrs.CacheControl, "|", attrs.Metadata)
	attrs, _ = c.Update(ctx, u, storage.ObjectAttrsToUpdate{Metadata: map[string]string{"draft": ""}}, upload.UpdateOptions{})
	fmt.Println(attrs.Metadata)
	// Output:
	// image/jpeg | public, max-age=3600 | map[camera:x100 draft:yes]
	// map[camera:x100]
}

// TestPermissions tells, before a batch, whether the credentials may do
// what it needs; a missing bucket is storage.ErrBucketNotExist.
func ExampleClient_TestPermissions() {
	_, c, stop := client(nil)
	defer stop()
	ctx := context.Background()

	got, err := c.TestPermissions(ctx, "my-bucket", "storage.objects.create", "storage.objects.delete")
	fmt.Println(got, err)
	_, err = c.TestPermissions(ctx, "no-such-bucket", "storage.objects.create")
	fmt.Println(errors.Is(err, storage.ErrBucketNotExist))
	// Output:
	// [storage.objects.create storage.objects.delete] <nil>
	// true
}

// Close ends the Client; its methods then fail with ErrClosed.
func ExampleClient_Close() {
	srv, opts := fake()
	defer srv.Close()
	ctx := context.Background()
	c, err := upload.New(ctx, opts)
	if err != nil {
		log.Fatal(err)
	}

	fmt.Println(c.Close())
	_, err = c.Stat(ctx, upload.URL{Bucket: "my-bucket", Object: "x"})
	fmt.Println(errors.Is(err, upload.ErrClosed))
	// Output:
	// <nil>
	// true
}

// Expect announces a batch ahead of its transfers, so that BatchProgress
// has the whole job's totals from the first report.
func ExampleClient_Expect() {
	var last upload.BatchProgress
	_, c, stop := client(func(o *upload.Options) {
		o.BatchProgress = func(b upload.BatchProgress) { last = b }
	})
	defer stop()
	ctx := context.Background()
	dir := tempFiles(map[string]string{"a": "12345", "b": "1234567890"})
	defer os.RemoveAll(dir)

	c.Expect(2, 15) // counted before the first upload starts
	for _, name := range []string{"a", "b"} {
		c.UploadFile(ctx, filepath.Join(dir, name), upload.URL{Bucket: "my-bucket", Object: name}, upload.UploadOptions{})
		fmt.Printf("%d/%d files, %d/%d bytes\n", last.FilesDone, last.Files, last.BytesDone, last.Bytes)
	}
	// Output:
	// 1/2 files, 5/15 bytes
	// 2/2 files, 15/15 bytes
}

// BatchProgress counts the Client's whole life; ResetProgress starts a
// batch's totals afresh.
func ExampleClient_ResetProgress() {
	var last upload.BatchProgress
	_, c, stop := client(func(o *upload.Options) {
		o.BatchProgress = func(b upload.BatchProgress) { last = b }
	})
	defer stop()
	ctx := context.Background()
	dir := tempFiles(map[string]string{"a": "12345", "b": "1234567890"})
	defer os.RemoveAll(dir)

	c.UploadFile(ctx, filepath.Join(dir, "a"), upload.URL{Bucket: "my-bucket", Object: "a"}, upload.UploadOptions{})
	c.UploadFile(ctx, filepath.Join(dir, "b"), upload.URL{Bucket: "my-bucket", Object: "b"}, upload.UploadOptions{})
	fmt.Println("without reset:", last.FilesDone, "files,", last.BytesDone, "bytes")

	c.ResetProgress()
	c.UploadFile(ctx, filepath.Join(dir, "b"), upload.URL{Bucket: "my-bucket", Object: "b2"}, upload.UploadOptions{})
	fmt.Println("after reset:", last.FilesDone, "files,", last.BytesDone, "bytes")
	// Output:
	// without reset: 2 files, 15 bytes
	// after reset: 1 files, 10 bytes
}
