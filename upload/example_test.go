package upload_test

import (
	"context"
	"fmt"
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
