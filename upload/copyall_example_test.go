package upload_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/gcsput/gcsput/upload"
)

// CopyAll does what 'gcsput cp' does with many operands: here a quoted
// local wildcard and a directory go up in one call (the destination is a
// folder), then a gs:// wildcard comes back down into a directory.
func ExampleClient_CopyAll() {
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
	os.WriteFile(filepath.Join(dir, "a.log"), []byte("alpha"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.log"), []byte("bravo"), 0o644)
	os.MkdirAll(filepath.Join(dir, "conf"), 0o755)
	os.WriteFile(filepath.Join(dir, "conf", "app.ini"), []byte("[app]"), 0o644)

	srcs := []string{filepath.Join(dir, "*.log"), filepath.Join(dir, "conf")}
	results, err := c.CopyAll(ctx, srcs, "gs://my-bucket/backup/", upload.CopyAllOptions{Recursive: true})
	if err != nil {
		log.Fatal(err) // errors.Is(err, upload.ErrBadOperand): nothing was sent
	}
	fmt.Println(len(results), "uploaded")

	out := filepath.Join(dir, "restore")
	results, err = c.CopyAll(ctx, []string{"gs://my-bucket/backup/**.log"}, out, upload.CopyAllOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range results {
		data, _ := os.ReadFile(r.Dest)
		fmt.Println(r.Status, filepath.Base(r.Dest), string(data))
	}
	// Unordered output:
	// 3 uploaded
	// downloaded a.log alpha
	// downloaded b.log bravo
}

// MoveAll does what 'gcsput mv -r' does: each file is uploaded, verified,
// and only then removed; the directories left empty go too.
func ExampleClient_MoveAll() {
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
	outbox := filepath.Join(dir, "outbox")
	os.MkdirAll(filepath.Join(outbox, "day1"), 0o755)
	os.WriteFile(filepath.Join(outbox, "day1", "report.csv"), []byte("mon,42\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "note.txt"), []byte("hello"), 0o644)

	srcs := []string{outbox, filepath.Join(dir, "note.txt")}
	if _, err := c.MoveAll(ctx, srcs, "gs://my-bucket/inbox/", upload.MoveAllOptions{Recursive: true}); err != nil {
		log.Fatal(err)
	}
	names, _ := srv.ObjectNames("my-bucket")
	fmt.Println(names)
	_, err = os.Stat(outbox)
	fmt.Println("outbox left:", !os.IsNotExist(err))
	// Output:
	// [inbox/note.txt inbox/outbox/day1/report.csv]
	// outbox left: false
}
