package upload

import (
	"context"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// componentPUTs counts, per component, the requests that carried its bytes.
func componentPUTs(log []fakegcs.Request) map[string]int {
	n := map[string]int{}
	for _, q := range log {
		if IsComponentName(q.Object) && q.Method == "PUT" && q.BytesIn > 0 {
			n[q.Object]++
		}
	}
	return n
}

// At the default chunk size a component goes up from the file in one
// request: the file needs no chunk buffer, and each chunk past the first
// cost its stream a round trip waiting for the 308 (on a 60 ms link, 60 ms
// of every component's 1.7 s). An explicit ChunkSize keeps its meaning.
func TestComponentInOneRequest(t *testing.T) {
	ctx := context.Background()
	per := int64(DefaultChunkSize + 256<<10) // more than one default chunk
	data := randBytes(int(2*per), 71)
	for _, tc := range []struct {
		name  string
		chunk int
		want  int // requests per component
	}{{"default", 0, 1}, {"explicit 16MiB", DefaultChunkSize, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, fakegcs.Options{})
			c := newClient(t, srv, composeOpts(per, nil, func(o *Options) {
				o.ChunkSize, o.ParallelUpload, o.Parallelism = tc.chunk, ParallelOn, 2
			}))
			src := writeTemp(t, t.TempDir(), "f.bin", data)
			r, err := c.UploadFile(ctx, src, URL{testBucket, "o"}, UploadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			wantObject(t, srv, "o", data)
			if !strings.Contains(r.Note, "composite of 2 components") {
				t.Fatalf("note %q", r.Note)
			}
			puts := componentPUTs(srv.Log())
			if len(puts) != 2 {
				t.Fatalf("requests per component %v; want 2 components", puts)
			}
			for name, n := range puts {
				if n != tc.want {
					t.Errorf("%s: %d requests with bytes; want %d", name, n, tc.want)
				}
			}
		})
	}
}
