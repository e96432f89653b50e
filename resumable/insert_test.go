package resumable

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// sentBytes adds up the EventSent lengths and checks that their offsets
// advance within each attempt.
func sentBytes(t *testing.T, events []Event) int64 {
	t.Helper()
	var total, last int64
	for _, e := range events {
		if e.Kind != EventSent {
			continue
		}
		if e.Length <= 0 || (e.Offset-e.Length != last && e.Offset-e.Length != 0) {
			t.Errorf("EventSent %+v after offset %d", e, last)
		}
		total, last = total+e.Length, e.Offset
	}
	return total
}

func TestInsertStoresVerifiedObject(t *testing.T) {
	for _, size := range []int{0, 1000, inlinePooledMax + 1, inlineMax, inlineMax + 1, 3<<20 + 7} {
		e := newEnv(t, kib256)
		data := testData(size)
		obj, err := e.c.Insert(context.Background(), ObjectSpec{Bucket: "bkt", Name: "small", Size: int64(size),
			ContentType: "text/plain", Metadata: map[string]string{"k": "v"}, DoesNotExist: true}, bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		got, attrs, err := e.srv.Object("bkt", "small")
		if err != nil || !bytes.Equal(got, data) || attrs.ContentType != "text/plain" || attrs.Metadata["k"] != "v" {
			t.Fatalf("%d bytes: stored %d bytes, attrs %+v (%v)", size, len(got), attrs, err)
		}
		crc := EncodeCRC32C(crc32.Checksum(data, castagnoli))
		if obj.Generation != attrs.Generation || int64(obj.Size) != int64(size) || obj.Crc32c != crc {
			t.Errorf("%d bytes: object %+v, crc %s", size, obj, crc)
		}
		if e.events[0].Kind != EventStarted || e.events[0].CRC32C != crc || e.events[len(e.events)-1].Kind != EventFinished {
			t.Errorf("%d bytes: events %v", size, e.events)
		}
		if n := sentBytes(t, e.events); n != int64(size) {
			t.Errorf("%d bytes: EventSent adds up to %d", size, n)
		}
		if n := e.srv.Count("storage.objects.insert"); n != 1 {
			t.Errorf("%d bytes: %d inserts", size, n)
		}
	}
}

func TestInsertRetriesAndCountsEveryAttempt(t *testing.T) {
	// A body held in memory (200000 bytes) counts once written whole: a
	// failed write counts nothing, so its least is the good attempt's. A
	// streamed body (400000 bytes) counts what the transport took, failed
	// attempts too: a reset after 100000 bytes had at least those, a
	// dropped response all of them; a 503 may answer before any is read.
	for _, tc := range []struct {
		size          int64
		fault         fakegcs.Fault
		least, atMost int64
	}{
		{200000, fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindStatus, Status: 503}, 200000, 400000},
		{200000, fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindReset, AfterBytes: 100000}, 200000, 400000},
		{200000, fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindDropResponse}, 400000, 400000},
		{400000, fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindStatus, Status: 503}, 400000, 800000},
		{400000, fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindReset, AfterBytes: 100000}, 500000, 800000},
		{400000, fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindDropResponse}, 800000, 800000},
	} {
		e := newEnv(t, kib256)
		e.srv.Inject(tc.fault)
		data := testData(int(tc.size))
		if _, err := e.c.Insert(context.Background(), ObjectSpec{Bucket: "bkt", Name: "o", Size: tc.size}, bytes.NewReader(data)); err != nil {
			t.Fatalf("%d bytes, %s: %v", tc.size, tc.fault.Kind, err)
		}
		if got, _, _ := e.srv.Object("bkt", "o"); !bytes.Equal(got, data) {
			t.Fatalf("%d bytes, %s: stored object differs", tc.size, tc.fault.Kind)
		}
		retries := 0
		for _, ev := range e.events {
			if ev.Kind == EventRetry {
				retries++
			}
		}
		if n := sentBytes(t, e.events); retries != 1 || n < tc.least || n > tc.atMost {
			t.Errorf("%d bytes, %s: %d retries, %d bytes sent (want 1 retry, %d to %d bytes)", tc.size, tc.fault.Kind, retries, n, tc.least, tc.atMost)
		}
		if last := e.events[len(e.events)-1]; last.Kind != EventFinished {
			t.Errorf("%d bytes, %s: the last event is %s, not finished", tc.size, tc.fault.Kind, last.Kind)
		}
	}
}

// changing is a source whose CheckSource says it changed.
type changing struct{ io.ReaderAt }

func (changing) CheckSource() error { return errors.New("size 5 -> 6") }

func TestInsertRefusesChangedSource(t *testing.T) {
	e := newEnv(t, kib256)
	_, err := e.c.Insert(context.Background(), ObjectSpec{Bucket: "bkt", Name: "o", Size: 5}, changing{strings.NewReader("hello")})
	if !errors.Is(err, ErrSourceChanged) || !strings.Contains(err.Error(), "size 5 -> 6") {
		t.Fatalf("error %v; want ErrSourceChanged", err)
	}
	if n := e.srv.Count("storage.objects.insert"); n != 0 {
		t.Errorf("%d inserts sent for a changed source", n)
	}
	// A source shorter than the size given is refused before any request too.
	_, err = e.c.Insert(context.Background(), ObjectSpec{Bucket: "bkt", Name: "o", Size: 6}, strings.NewReader("hello"))
	var se *SourceError
	if !errors.As(err, &se) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short source: error %v", err)
	}
}

func TestInsertPreconditionAndCorruption(t *testing.T) {
	e := newEnv(t, kib256)
	if _, err := e.srv.PutObject("bkt", "o", []byte("old")); err != nil {
		t.Fatal(err)
	}
	_, err := e.c.Insert(context.Background(), ObjectSpec{Bucket: "bkt", Name: "o", Size: 3, DoesNotExist: true}, strings.NewReader("new"))
	if !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("error %v; want ErrPreconditionFailed", err)
	}
	if got, _, _ := e.srv.Object("bkt", "o"); string(got) != "old" {
		t.Fatalf("object %q was replaced", got)
	}
	// Bytes that differ from the ones checksummed (a large source is read
	// twice): the server refuses them, and the refusal is not retried.
	data := testData(inlineMax + 1000)
	_, err = e.c.Insert(context.Background(), ObjectSpec{Bucket: "bkt", Name: "p", Size: int64(len(data))}, &flipping{data: data})
	if !errors.Is(err, ErrChecksumMismatch) {
		t.Fatalf("altered insert: error %v; want ErrChecksumMismatch", err)
	}
	if _, err := e.srv.Attrs("bkt", "p"); err == nil {
		t.Error("an altered insert created the object")
	}
	if n := e.srv.Count("storage.objects.insert"); n != 2 {
		t.Errorf("%d inserts; want 2 (the refused one not retried)", n)
	}
}

// flipping returns data, with one byte changed once it has been read to the
// end once.
type flipping struct {
	data []byte
	read int
}

func (f *flipping) ReadAt(p []byte, off int64) (int, error) {
	n := copy(p, f.data[off:])
	if f.read >= len(f.data) && off <= 10 && off+int64(n) > 10 {
		p[10-off] ^= 0xff
	}
	f.read += n
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func TestFrameInline(t *testing.T) {
	for _, spare := range []int{0, 64} {
		data := make([]byte, 5, 5+spare)
		copy(data, "DATA!")
		got := string(frameInline(data, "head:", ":tail"))
		if got != "head:DATA!:tail" {
			t.Errorf("spare %d: %q", spare, got)
		}
	}
}

// TestInsertReusesBuffersSafely runs pooled inserts, some retried after the
// server took part of the body, side by side: every object must hold its
// own bytes. Under -race, a buffer given back to the pool while a failed
// attempt's body could still be read would show as a data race.
func TestInsertReusesBuffersSafely(t *testing.T) {
	e := newEnv(t, kib256)
	e.srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindReset, AfterBytes: 1000, Probability: 0.3, Times: -1})
	e.srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindStatus, Status: 503, Probability: 0.3, Times: -1})
	c, err := New(Options{HTTPClient: e.srv.Client(), Endpoint: e.srv.URL(), Retry: e.c.opts.Retry}) // no events: env's are not for concurrent transfers
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			data := bytes.Repeat([]byte{byte(i)}, 16<<10+i)
			name := fmt.Sprintf("o%d", i)
			if _, err := c.Insert(context.Background(), ObjectSpec{Bucket: "bkt", Name: name, Size: int64(len(data))}, bytes.NewReader(data)); err != nil {
				errs <- err
				return
			}
			if got, _, err := e.srv.Object("bkt", name); err != nil || !bytes.Equal(got, data) {
				errs <- fmt.Errorf("%s: stored %d bytes differ (%v)", name, len(got), err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
