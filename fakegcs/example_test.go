package fakegcs_test

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/storage"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/option"

	"github.com/gcsput/gcsput/fakegcs"
)

// The official client uploads through an injected 503 on its second chunk;
// its retry re-sends that chunk and the counters show what it cost.
func Example() {
	ctx := context.Background()
	srv, err := fakegcs.New(fakegcs.Options{Buckets: []string{"photos"}})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	fault := srv.Inject(fakegcs.Fault{
		Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk, Offset: new(int64(256 << 10)),
		Kind: fakegcs.KindStatus, Status: 503,
	})

	client, err := storage.NewClient(ctx, option.WithEndpoint(srv.Endpoint()), option.WithoutAuthentication())
	if err != nil {
		panic(err)
	}
	defer client.Close()
	client.SetRetry(storage.WithBackoff(gax.Backoff{Initial: time.Millisecond}))
	w := client.Bucket("photos").Object("cat.jpg").NewWriter(ctx)
	w.ChunkSize = 256 << 10
	w.Write(bytes.Repeat([]byte("x"), 600<<10))
	if err := w.Close(); err != nil {
		panic(err)
	}

	data, attrs, _ := srv.Object("photos", "cat.jpg")
	st, _ := srv.LastSession("photos", "cat.jpg")
	fmt.Println("stored:", len(data), "bytes, crc32c matches:", attrs.CRC32C == w.Attrs().CRC32C)
	fmt.Println("fault fired:", fault.Fired())
	fmt.Println("chunk requests:", st.Chunks, "persisted:", st.Persisted)
	fmt.Println("503s answered:", srv.Stats().Faults[fakegcs.KindStatus])
	// Output:
	// stored: 614400 bytes, crc32c matches: true
	// fault fired: 1
	// chunk requests: 4 persisted: 614400
	// 503s answered: 1
}
