package resumable

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"

	"google.golang.org/api/googleapi"

	"github.com/gcsput/gcsput/fakegcs"
)

// putParts stores data cut into n parts as objects part0…, and returns them
// as compose sources.
func putParts(t *testing.T, e *env, data []byte, n int) []ComposeSource {
	t.Helper()
	var srcs []ComposeSource
	step := len(data) / n
	for i := range n {
		part := data[i*step:]
		if i < n-1 {
			part = part[:step]
		}
		attrs, err := e.srv.PutObject("bkt", fmt.Sprintf("part%d", i), part)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, ComposeSource{Name: fmt.Sprintf("part%d", i), Generation: attrs.Generation,
			CRC32C: crc32.Checksum(part, castagnoli), Size: int64(len(part))})
	}
	return srcs
}

func TestComposeMakesTheConcatenation(t *testing.T) {
	e := newEnv(t, kib256)
	data := testData(1<<20 + 33)
	srcs := putParts(t, e, data, 32)
	e.srv.Inject(fakegcs.Fault{Op: "storage.objects.compose", Kind: fakegcs.KindDropResponse})
	obj, err := e.c.Compose(context.Background(), ObjectSpec{Bucket: "bkt", Name: "whole", ContentType: "text/plain",
		Metadata: map[string]string{"k": "v"}}, srcs)
	if err != nil {
		t.Fatal(err)
	}
	got, attrs, err := e.srv.Object("bkt", "whole")
	if err != nil || !bytes.Equal(got, data) || attrs.ContentType != "text/plain" || attrs.Metadata["k"] != "v" {
		t.Fatalf("composite: %d bytes, attrs %+v (%v)", len(got), attrs, err)
	}
	if obj.ComponentCount != 32 || obj.Md5Hash != "" || obj.Crc32c != EncodeCRC32C(crc32.Checksum(data, castagnoli)) {
		t.Errorf("composite object %+v", obj)
	}
	if n := e.srv.Count("storage.objects.compose"); n != 2 {
		t.Errorf("%d compose requests, want 2 (one reply lost)", n)
	}
}

func TestComposeRefusals(t *testing.T) {
	e := newEnv(t, kib256)
	srcs := putParts(t, e, testData(1000), 2)
	ctx := context.Background()
	// A source replaced since its component was uploaded is never composed.
	if _, err := e.srv.PutObject("bkt", "part1", []byte("other")); err != nil {
		t.Fatal(err)
	}
	// (GCS answers 404: that generation of it no longer exists.)
	_, err := e.c.Compose(ctx, ObjectSpec{Bucket: "bkt", Name: "whole"}, srcs)
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || gerr.Code != 404 {
		t.Errorf("replaced source: %v; want a 404", err)
	}
	if _, err := e.srv.Attrs("bkt", "whole"); err == nil {
		t.Error("a compose of a replaced source created the object")
	}
	// The destination's preconditions hold.
	srcs = putParts(t, e, testData(1000), 2)
	if _, err := e.srv.PutObject("bkt", "whole", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Compose(ctx, ObjectSpec{Bucket: "bkt", Name: "whole", DoesNotExist: true}, srcs); !errors.Is(err, ErrPreconditionFailed) {
		t.Errorf("existing destination with DoesNotExist: %v", err)
	}
	if got, _, _ := e.srv.Object("bkt", "whole"); string(got) != "x" {
		t.Errorf("destination replaced: %q", got)
	}
	// A wrong CRC32C for a source (a component that is not what was sent)
	// shows in the composite's checksum.
	bad := append([]ComposeSource(nil), srcs...)
	bad[0].CRC32C++
	if _, err := e.c.Compose(ctx, ObjectSpec{Bucket: "bkt", Name: "w2"}, bad); !errors.Is(err, ErrChecksumMismatch) {
		t.Errorf("wrong component crc: %v; want ErrChecksumMismatch", err)
	}
	// Too many or no sources: refused before any request.
	before := e.srv.Count("storage.objects.compose")
	for _, n := range []int{0, 33} {
		_, err := e.c.Compose(ctx, ObjectSpec{Bucket: "bkt", Name: "w3"}, make([]ComposeSource, n))
		if err == nil || !strings.Contains(err.Error(), "1 to 32 sources") {
			t.Errorf("%d sources: %v", n, err)
		}
	}
	if n := e.srv.Count("storage.objects.compose"); n != before {
		t.Errorf("refused composes sent %d requests", n-before)
	}
}
