package upload_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/gcsput/gcsput/upload"
)

func ExampleParseVersionedURL() {
	u, gen, err := upload.ParseVersionedURL("gs://my-bucket/logs/app.log#1718040001234567")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(u.Bucket, u.Object, gen)
	u, gen, _ = upload.ParseVersionedURL("gs://my-bucket/notes#draft") // not digits: part of the name
	fmt.Println(u.Object, gen)
	// Output:
	// my-bucket logs/app.log 1718040001234567
	// notes#draft 0
}

func ExampleHasWildcard() {
	for _, s := range []string{"logs/**.gz", "day-0?.csv", "[ab].txt", "plain/{a,b}"} {
		fmt.Println(s, upload.HasWildcard(s))
	}
	// Output:
	// logs/**.gz true
	// day-0?.csv true
	// [ab].txt true
	// plain/{a,b} false
}

func ExampleGlobFiles() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	for _, name := range []string{"a.log", "b.log", "c.txt", "sub/d.log"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644)
	}
	for _, pattern := range []string{"*.log", "**.log"} {
		paths, err := upload.GlobFiles(filepath.Join(dir, pattern))
		if err != nil {
			log.Fatal(err)
		}
		var rel []string
		for _, p := range paths {
			r, _ := filepath.Rel(dir, p)
			rel = append(rel, filepath.ToSlash(r))
		}
		fmt.Println(pattern, rel)
	}
	_, err := upload.GlobFiles(filepath.Join(dir, "*.csv"))
	var none *upload.NoMatchError
	fmt.Println(errors.As(err, &none))
	// Output:
	// *.log [a.log b.log]
	// **.log [a.log b.log sub/d.log]
	// true
}

// CheckCopyAll and CheckMoveAll find what CopyAll and MoveAll would refuse
// before any request: a program may call them before it connects.
func ExampleCheckCopyAll() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	os.Mkdir(filepath.Join(dir, "photos"), 0o755)

	err := upload.CheckCopyAll([]string{filepath.Join(dir, "photos")}, "gs://my-bucket/backup/", upload.CopyAllOptions{})
	fmt.Println(errors.Is(err, upload.ErrBadOperand))
	err = upload.CheckCopyAll([]string{filepath.Join(dir, "photos")}, "gs://my-bucket/backup/", upload.CopyAllOptions{Recursive: true})
	fmt.Println(err)
	// Output:
	// true
	// <nil>
}

func ExampleCheckMoveAll() {
	err := upload.CheckMoveAll([]string{"-"}, "gs://my-bucket/stdin", upload.MoveAllOptions{}) // a stream cannot be moved
	fmt.Println(errors.Is(err, upload.ErrBadOperand))
	err = upload.CheckMoveAll([]string{"gs://my-bucket/a", "gs://my-bucket/b"}, "gs://my-bucket/folder/", upload.MoveAllOptions{})
	fmt.Println(err)
	// Output:
	// true
	// <nil>
}

func ExampleCheckSync() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	src, dst := upload.LocalSide(dir), upload.RemoteSide(upload.URL{Bucket: "my-bucket", Object: "mirror/"})

	fmt.Println(upload.CheckSync(src, dst, upload.SyncOptions{Delete: true, MaxDelete: upload.MaxDeletePercent(10)}))
	err := upload.CheckSync(src, upload.LocalSide(dir+"-copy"), upload.SyncOptions{})
	fmt.Println(errors.Is(err, upload.ErrBadOption))
	// Output:
	// <nil>
	// true
}

func ExampleDefaultStateDir() {
	dir, err := upload.DefaultStateDir()
	if err != nil {
		log.Fatal(err) // no home directory: give Options.StateDir, or set Options.NoState
	}
	fmt.Println(filepath.Base(dir) == "gcsput" || strings.HasSuffix(dir, filepath.Join("gcsput", "state")))
	// Output:
	// true
}

func ExampleIsRetained() {
	srv, opts := fake()
	defer srv.Close()
	ctx := context.Background()
	c, err := upload.New(ctx, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	dst := upload.URL{Bucket: "my-bucket", Object: "ledger.csv"}
	_, err = c.UploadReader(ctx, strings.NewReader("day,total\n"), dst,
		upload.UploadOptions{Attrs: upload.Attrs{Holds: upload.Holds{TemporaryHold: true}}})
	if err != nil {
		log.Fatal(err)
	}
	err = c.Delete(ctx, dst, upload.DeleteOptions{})
	fmt.Println(upload.IsRetained(err))
	// Output:
	// true
}
