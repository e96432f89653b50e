package resumable_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

// Upload 600 KiB in 256 KiB chunks to an in-process fake GCS, then download
// it back and check it.
func Example() {
	srv, err := fakegcs.New(fakegcs.Options{Buckets: []string{"photos"}})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	c, err := resumable.New(resumable.Options{
		Endpoint:  srv.URL(),
		ChunkSize: 256 << 10,
		OnEvent: func(e resumable.Event) {
			if e.Kind == resumable.EventChunk {
				fmt.Printf("chunk at %d: %d persisted\n", e.Offset, e.Persisted)
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	data := []byte(strings.Repeat("0123456789", 61440))

	s, err := c.Start(ctx, resumable.ObjectSpec{Bucket: "photos", Name: "a.txt", Size: int64(len(data)),
		ContentType: "text/plain", DoesNotExist: true})
	if err != nil {
		log.Fatal(err)
	}
	obj, err := c.Upload(ctx, s, bytes.NewReader(data))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("uploaded", obj.Name, obj.Size, "bytes, crc32c", obj.Crc32c)

	var got bytes.Buffer
	res, err := c.Download(ctx, resumable.DownloadSpec{Bucket: "photos", Object: "a.txt"}, &got)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("downloaded", res.Size, "bytes, verified:", res.Verified, "same:", bytes.Equal(got.Bytes(), data))
	// Output:
	// chunk at 0: 262144 persisted
	// chunk at 262144: 524288 persisted
	// chunk at 524288: 614400 persisted
	// uploaded a.txt 614400 bytes, crc32c qUMnIw==
	// downloaded 614400 bytes, verified: true same: true
}
