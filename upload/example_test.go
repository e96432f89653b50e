package upload_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/upload"
)

// fake starts an in-process fakegcs with one bucket; the examples use it in
// place of Cloud Storage. (Against GCS, leave Endpoint and Auth empty:
// Application Default Credentials are used.)
func fake() (*fakegcs.Server, upload.Options) {
	srv, err := fakegcs.New(fakegcs.Options{Buckets: []string{"my-bucket"}})
	if err != nil {
		log.Fatal(err)
	}
	return srv, upload.Options{Endpoint: srv.URL(), Auth: auth.Options{NoAuth: true}, NoState: true}
}

func Example() {
	srv, opts := fake()
	defer srv.Close()
	ctx := context.Background()

	c, err := upload.New(ctx, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "report.csv")
	os.WriteFile(path, []byte("day,bytes\nmon,42\n"), 0o644)

	dst, err := upload.ParseURL("gs://my-bucket/reports/report.csv")
	if err != nil {
		log.Fatal(err)
	}
	r, err := c.UploadFile(ctx, path, dst, upload.UploadOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Status, r.Dest, r.Size, "bytes, crc32c", resumable.EncodeCRC32C(r.CRC32C))

	attrs, err := c.Stat(ctx, dst)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(attrs.ContentType)
	// Output:
	// uploaded gs://my-bucket/reports/report.csv 17 bytes, crc32c 7W+nUg==
	// text/csv; charset=utf-8
}

// UploadDir names objects prefix + "/" + the path below the directory: the
// directory's own name is not kept (unlike `gcsput cp -r dir gs://b/prefix/`,
// which keeps it, as gsutil does).
func ExampleClient_UploadDir() {
	srv, opts := fake()
	defer srv.Close()
	ctx := context.Background()
	opts.Parallelism = 4
	c, err := upload.New(ctx, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	os.MkdirAll(filepath.Join(dir, "photos", "2024"), 0o755)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o644)
	os.WriteFile(filepath.Join(dir, "photos", "2024", "a.jpg"), []byte("jpeg bytes"), 0o644)
	os.Symlink(filepath.Join(dir, "photos"), filepath.Join(dir, "photos-link"))

	results, err := c.UploadDir(ctx, dir, upload.URL{Bucket: "my-bucket", Object: "backup"},
		upload.UploadOptions{SkipUnchanged: true})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range results {
		fmt.Println(strings.TrimSpace(fmt.Sprint(r.Status, " ", r.Object, " ", r.Note)))
	}

	// A second run sends nothing: every object has the file's size and CRC32C.
	results, _ = c.UploadDir(ctx, dir, upload.URL{Bucket: "my-bucket", Object: "backup"},
		upload.UploadOptions{SkipUnchanged: true})
	fmt.Println(results[0].Status, results[0].Note)
	// Output:
	// uploaded backup/notes.txt
	// uploaded backup/photos/2024/a.jpg
	// skipped backup/photos-link symlink to a directory (not followed)
	// skipped unchanged
}

func ExampleClient_DownloadPrefix() {
	srv, opts := fake()
	defer srv.Close()
	srv.PutObject("my-bucket", "site/index.html", []byte("<h1>hi</h1>"))
	srv.PutObject("my-bucket", "site/css/main.css", []byte("h1{}"))
	srv.PutObject("my-bucket", "site/../../etc/passwd", []byte("root:x"))
	ctx := context.Background()
	c, err := upload.New(ctx, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	results, err := c.DownloadPrefix(ctx, upload.URL{Bucket: "my-bucket", Object: "site/"}, dir, upload.DownloadOptions{})
	for _, r := range results {
		if r.Err != nil {
			fmt.Println(r.Status, strings.ReplaceAll(r.Err.Error(), dir, "DIR"))
			continue
		}
		rel, _ := filepath.Rel(dir, r.Dest)
		fmt.Println(r.Status, r.Object, "→", filepath.ToSlash(rel))
	}
	fmt.Println(strings.ReplaceAll(err.Error(), dir, "DIR"))
	// Output:
	// failed refusing to download object "site/../../etc/passwd": its name climbs out with "..", so it would be written outside DIR
	// downloaded site/css/main.css → css/main.css
	// downloaded site/index.html → index.html
	// upload: 1 of 3 transfers failed; first: gs://my-bucket/site/../../etc/passwd: refusing to download object "site/../../etc/passwd": its name climbs out with "..", so it would be written outside DIR
}

func ExampleParseURL() {
	for _, s := range []string{"gs://my-bucket/logs/2024/", "gs:/my-bucket/x", "gs://My_Bucket/x"} {
		u, err := upload.ParseURL(s)
		fmt.Printf("bucket=%q object=%q err=%v\n", u.Bucket, u.Object, err)
	}
	// Output:
	// bucket="my-bucket" object="logs/2024/" err=<nil>
	// bucket="" object="" err=bad URL name "gs:/my-bucket/x": did you mean gs://my-bucket/x?
	// bucket="" object="" err=bad bucket name "My_Bucket": 'M' not allowed: use lowercase letters, digits, '-', '_' and '.'
}

// Download writes through a temporary file beside the target and renames it
// into place only after the CRC32C of every byte matched the object's.
func ExampleClient_Download() {
	ctx := context.Background()
	srv, opts := fake()
	defer srv.Close()
	srv.PutObject("my-bucket", "logs/today.log", []byte("12:00 all well\n"))
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	c, err := upload.New(ctx, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	dst := filepath.Join(dir, "today.log")
	r, err := c.Download(ctx, upload.URL{Bucket: "my-bucket", Object: "logs/today.log"}, dst, upload.DownloadOptions{})
	if err != nil {
		log.Fatal(err)
	}
	b, _ := os.ReadFile(dst)
	fmt.Println(r.Status, r.Size, "bytes, crc32c", resumable.EncodeCRC32C(r.CRC32C))
	fmt.Print(string(b))
	// Output:
	// downloaded 15 bytes, crc32c CM9RBw==
	// 12:00 all well
}

// A transfer cut short (here by its context, as Ctrl-C would) leaves its
// session in the state directory; another Client on the same directory,
// in this process or a later one, lists it and finishes it from the
// server's offset, without sending again what the server has.
func ExampleClient_Resume() {
	srv, opts := fake()
	defer srv.Close()
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "big.bin")
	os.WriteFile(src, bytes.Repeat([]byte("0123456789abcdef"), 1<<16), 0o644) // 1 MiB

	opts.NoState, opts.StateDir = false, filepath.Join(dir, "state")
	opts.ChunkSize, opts.SmallFileThreshold = 256<<10, -1 // resumable, in 4 chunks
	first, cancel := context.WithCancel(ctx)
	interrupted := opts
	interrupted.OnEvent = func(e resumable.Event) {
		if e.Kind == resumable.EventChunk {
			cancel() // after the first chunk the server acknowledged
		}
	}
	c, err := upload.New(ctx, interrupted)
	if err != nil {
		log.Fatal(err)
	}
	r, _ := c.UploadFile(first, src, upload.URL{Bucket: "my-bucket", Object: "big.bin"}, upload.UploadOptions{})
	c.Close()
	fmt.Println(r.Status, "saved:", r.Saved)

	c, err = upload.New(ctx, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	sessions, _ := c.Sessions()
	for _, s := range sessions {
		fmt.Println(s.Kind, s.Dest, s.Offset, "of", s.Size)
	}
	results, err := c.Resume(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range results {
		fmt.Println(r.Status, "from", r.ResumedFrom, "sent", r.Transferred, "of", r.Size)
	}
	// Output:
	// interrupted saved: true
	// upload gs://my-bucket/big.bin 262144 of 1048576
	// resumed from 262144 sent 786432 of 1048576
}

// Keys are set per call, as the official client sets them per object: one
// Client (given no key) writes an object under one customer-supplied key,
// then copies it under another in one call, reading with the first.
func ExampleEncryption() {
	srv, opts := fake()
	defer srv.Close()
	ctx := context.Background()
	c, err := upload.New(ctx, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	oldKey := resumable.EncryptionKey(bytes.Repeat([]byte{1}, 32)) // 32 bytes of AES-256
	newKey := resumable.EncryptionKey(bytes.Repeat([]byte{2}, 32))
	src := upload.URL{Bucket: "my-bucket", Object: "secret.txt"}
	dst := upload.URL{Bucket: "my-bucket", Object: "rekeyed.txt"}
	if _, err := c.UploadReader(ctx, strings.NewReader("top secret"), src,
		upload.UploadOptions{Encryption: &upload.Encryption{Key: oldKey}}); err != nil {
		log.Fatal(err)
	}
	// Key writes the copy; DecryptionKeys read the source.
	rekey := &upload.Encryption{Key: newKey, DecryptionKeys: []resumable.EncryptionKey{oldKey}}
	if _, err := c.Copy(ctx, src, dst, upload.CopyOptions{Encryption: rekey}); err != nil {
		log.Fatal(err)
	}

	var b bytes.Buffer
	_, err = c.DownloadWriter(ctx, dst, &b, upload.DownloadOptions{Encryption: &upload.Encryption{Key: newKey}})
	fmt.Println(b.String(), err)
	_, err = c.DownloadWriter(ctx, dst, io.Discard, upload.DownloadOptions{Encryption: &upload.Encryption{Key: oldKey}})
	fmt.Println(errors.Is(err, upload.ErrNoDecryptionKey))
	// Output:
	// top secret <nil>
	// true
}
