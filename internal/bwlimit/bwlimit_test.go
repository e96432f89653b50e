package bwlimit

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Every body byte in both directions draws from the one limit, one burst at
// most per wait: an echo of 200 KiB costs 400 KiB of tokens.
func TestOneLimitForBothDirections(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		w.Write(bytes.Repeat([]byte("x"), int(n)))
	}))
	defer srv.Close()
	l := New(1 << 20)
	var mu sync.Mutex // the request body is read on the transport's goroutine
	var taken, largest int
	l.wait = func(_ context.Context, n int) error {
		mu.Lock()
		defer mu.Unlock()
		taken, largest = taken+n, max(largest, n)
		return nil
	}
	hc := &http.Client{Transport: l.Transport(http.DefaultTransport)}
	payload := bytes.Repeat([]byte("y"), 200<<10)
	resp, err := hc.Post(srv.URL, "application/octet-stream", bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || len(got) != len(payload) {
		t.Fatalf("echoed %d bytes, err %v", len(got), err)
	}
	mu.Lock()
	defer mu.Unlock()
	if taken != 2*len(payload) || largest > l.l.Burst() {
		t.Fatalf("took %d tokens (want %d), largest wait %d (burst %d)", taken, 2*len(payload), largest, l.l.Burst())
	}
}

// A cancelled context ends a wait at once with the context's error.
func TestWaitEndsWithTheContext(t *testing.T) {
	l := New(1) // burst 16 KiB, then one byte per second
	ctx, cancel := context.WithCancel(context.Background())
	b := &body{ReadCloser: io.NopCloser(strings.NewReader(strings.Repeat("z", 64<<10))), ctx: ctx, l: l}
	buf := make([]byte, 64<<10)
	if n, err := b.Read(buf); n != 16<<10 || err != nil {
		t.Fatalf("first read: %d, %v; want one burst of 16 KiB", n, err)
	}
	cancel()
	if _, err := b.Read(buf); err != context.Canceled {
		t.Fatalf("second read: %v, want context.Canceled", err)
	}
}

func TestNoLimit(t *testing.T) {
	if New(0) != nil || New(-5) != nil {
		t.Fatal("0 and negative rates must mean no limit")
	}
	var l *Limit
	if l.Transport(http.DefaultTransport) != http.DefaultTransport {
		t.Fatal("a nil Limit must return the base transport")
	}
}
