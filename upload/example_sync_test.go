package upload_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/gcsput/gcsput/upload"
)

// Sync makes a prefix mirror a directory: PlanSync says what it would do
// (a dry run), Sync does it, and a second Sync finds nothing to send. With
// Delete, the delete guard refuses a sync that would delete too much (an
// unmounted volume is an empty directory) before anything changes.
func ExampleClient_Sync() {
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
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha"), 0o644)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "b.txt"), []byte("beta"), 0o644)
	srv.PutObject("my-bucket", "backup/a.txt", []byte("alpha, last week"))
	srv.PutObject("my-bucket", "backup/old.txt", []byte("gone from the directory"))

	src := upload.LocalSide(dir)
	dst, err := upload.ParseSide("gs://my-bucket/backup")
	if err != nil {
		log.Fatal(err)
	}
	o := upload.SyncOptions{Delete: true, Exclude: []string{"*.tmp"}}

	plan, err := c.PlanSync(ctx, src, dst, o)
	if err != nil {
		log.Fatal(err)
	}
	for _, it := range plan.Copies {
		fmt.Println("would copy", it.Path, "to", it.Dest)
	}
	for _, it := range plan.Deletes {
		fmt.Println("would delete", it.Dest)
	}

	for range 2 {
		rep, err := c.Sync(ctx, src, dst, o)
		switch {
		case errors.Is(err, upload.ErrDeleteGuard):
			log.Fatal(err) // nothing was changed
		case err != nil:
			// Some entries failed (the Results given to Options.OnResult
			// say which), and the deletes were withheld.
			log.Fatalf("%v; %d deletes withheld (%s)", err, rep.DeletesWithheld, rep.WithheldBecause)
		}
		fmt.Printf("copied %d (%d bytes), deleted %d, unchanged %d\n", rep.Copied, rep.Bytes, rep.Deleted, rep.Unchanged)
	}
	// Output:
	// would copy a.txt to gs://my-bucket/backup/a.txt
	// would copy sub/b.txt to gs://my-bucket/backup/sub/b.txt
	// would delete gs://my-bucket/backup/old.txt
	// copied 2 (9 bytes), deleted 1, unchanged 0
	// copied 0 (0 bytes), deleted 0, unchanged 2
}
