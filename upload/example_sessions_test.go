package upload_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/upload"
)

// savingFake starts a fakegcs and returns the Options of a Client that saves
// its transfers in a state directory below dir, sending 256 KiB chunks.
func savingFake(dir string) (*fakegcs.Server, upload.Options) {
	srv, opts := fake()
	opts.NoState, opts.StateDir = false, filepath.Join(dir, "state")
	opts.ChunkSize, opts.SmallFileThreshold = 256<<10, -1
	return srv, opts
}

// interruptedUpload uploads a 1 MiB file below dir to gs://my-bucket/big.bin and
// cancels the upload once the server has its first chunk, as Ctrl-C
// would: the session stays saved in opts' state directory.
func interruptedUpload(opts upload.Options, dir string) {
	src := filepath.Join(dir, "big.bin")
	if err := os.WriteFile(src, bytes.Repeat([]byte("0123456789abcdef"), 1<<16), 0o644); err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts.OnEvent = func(e resumable.Event) {
		if e.Kind == resumable.EventChunk {
			cancel()
		}
	}
	c, err := upload.New(ctx, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if r, _ := c.UploadFile(ctx, src, upload.URL{Bucket: "my-bucket", Object: "big.bin"}, upload.UploadOptions{}); !r.Saved {
		log.Fatalf("the upload was not saved: %v", r.Err)
	}
}

// Sessions lists the transfers saved in the state directory, unfinished;
// they hold no secret (the session URI stays in the directory).
func ExampleClient_Sessions() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	srv, opts := savingFake(dir)
	defer srv.Close()
	interruptedUpload(opts, dir)

	c, err := upload.New(context.Background(), opts)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	sessions, err := c.Sessions()
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range sessions {
		fmt.Println(s.Kind, filepath.Base(s.Source), "→", s.Dest, s.Offset, "of", s.Size, "bytes")
	}
	// Output:
	// upload big.bin → gs://my-bucket/big.bin 262144 of 1048576 bytes
}

// CancelSession abandons a saved transfer: the upload session is deleted
// on the server, with the bytes it holds, and the record removed.
func ExampleClient_CancelSession() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	srv, opts := savingFake(dir)
	defer srv.Close()
	interruptedUpload(opts, dir)
	ctx := context.Background()
	c, err := upload.New(ctx, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	sessions, _ := c.Sessions()
	fmt.Println(c.CancelSession(ctx, sessions[0]))
	left, _ := c.Sessions()
	fmt.Println(len(left), "saved")
	err = c.CancelSession(ctx, sessions[0])
	fmt.Println(errors.Is(err, fs.ErrNotExist))
	// Output:
	// <nil>
	// 0 saved
	// true
}

// ForceCancelSession cancels a transfer that is running, in this process
// or another: it asks the transfer to stop, waits for it to let go, then
// cancels it as CancelSession does.
func ExampleClient_ForceCancelSession() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	srv, opts := savingFake(dir)
	defer srv.Close()
	ctx := context.Background()
	src := filepath.Join(dir, "big.bin")
	os.WriteFile(src, bytes.Repeat([]byte("0123456789abcdef"), 1<<16), 0o644)
	// The second chunk hangs, so the upload is still running when it is cancelled.
	srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk, Offset: new(int64(256 << 10)),
		Kind: fakegcs.KindStall, Delay: time.Minute})
	running := make(chan struct{})
	uploading := opts
	uploading.OnEvent = func(e resumable.Event) {
		if e.Kind == resumable.EventChunk && e.Offset == 0 { // the first chunk is saved
			close(running)
		}
	}
	uploader, err := upload.New(ctx, uploading)
	if err != nil {
		log.Fatal(err)
	}
	defer uploader.Close()
	done := make(chan *upload.Result)
	go func() {
		r, _ := uploader.UploadFile(ctx, src, upload.URL{Bucket: "my-bucket", Object: "big.bin"}, upload.UploadOptions{})
		done <- r
	}()
	<-running

	c, err := upload.New(ctx, opts) // as another process would
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	sessions, _ := c.Sessions()
	fmt.Println(c.ForceCancelSession(ctx, sessions[0], 30*time.Second))
	r := <-done
	fmt.Println(r.Status, errors.Is(r.Err, upload.ErrStopped))
	left, _ := c.Sessions()
	_, err = srv.Attrs("my-bucket", "big.bin")
	fmt.Println(len(left), "saved; object created:", err == nil)
	// Output:
	// <nil>
	// failed true
	// 0 saved; object created: false
}

// GCSessions removes the saved transfers too old to resume (their upload
// sessions expire on the server after a week).
func ExampleClient_GCSessions() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	srv, opts := savingFake(dir)
	defer srv.Close()
	interruptedUpload(opts, dir)
	ctx := context.Background()

	weekLater := opts
	weekLater.Now = func() time.Time { return time.Now().Add(7 * 24 * time.Hour) }
	c, err := upload.New(ctx, weekLater)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	collected, err := c.GCSessions(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range collected.Sessions {
		fmt.Println("removed", s.Kind, s.Dest)
	}
	left, _ := c.Sessions()
	fmt.Println(len(left), "saved")
	// Output:
	// removed upload gs://my-bucket/big.bin
	// 0 saved
}
