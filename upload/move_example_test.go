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

// Move copies, verifies, then removes the source: here a file to an object,
// the object to another, and that one back to a file. With NoClobber a
// destination that exists is skipped and the source kept.
func ExampleClient_Move() {
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
	local := filepath.Join(dir, "report.csv")
	os.WriteFile(local, []byte("day,bytes\nmon,42\n"), 0o644)

	inbox := upload.RemoteSide(upload.URL{Bucket: "my-bucket", Object: "inbox/report.csv"})
	archive := upload.RemoteSide(upload.URL{Bucket: "my-bucket", Object: "archive/report.csv"})
	restored := upload.LocalSide(filepath.Join(dir, "restored.csv"))
	for _, m := range [][2]upload.Side{
		{upload.LocalSide(local), inbox},
		{inbox, archive},
		{archive, restored},
	} {
		r, err := c.Move(ctx, m[0], m[1], upload.MoveOptions{})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(r.Status, r.Size, "bytes to", filepath.Base(r.Dest))
	}
	_, err = os.Stat(local)
	fmt.Println("source gone:", os.IsNotExist(err))

	os.WriteFile(local, []byte("new"), 0o644)
	r, _ := c.Move(ctx, upload.LocalSide(local), restored, upload.MoveOptions{})
	fmt.Println(r.Status, errors.Is(r.Err, upload.ErrBadOption)) // one side must be an object

	srv.PutObject("my-bucket", "taken", []byte("someone else's"))
	taken, _ := upload.ParseSide("gs://my-bucket/taken") // as a command line gives it
	r, _ = c.Move(ctx, upload.LocalSide(local), taken, upload.MoveOptions{NoClobber: true})
	fmt.Println(r.Status, r.Note)
	// Output:
	// moved 17 bytes to report.csv
	// moved 17 bytes to report.csv
	// moved 17 bytes to restored.csv
	// source gone: true
	// failed true
	// skipped exists; source kept
}
