package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/upload"
)

func TestReporterJSON(t *testing.T) {
	var out, errb bytes.Buffer
	start := time.Unix(1000, 0)
	r := newReporter(&out, newProgress(&errb, false), true, false, start)
	r.add(fileRecord{Op: "upload", Source: "a", Destination: "gs://b/a", Status: "uploaded", Bytes: 10, CRC32C: "AAAAAA=="})
	r.add(fileRecord{Op: "upload", Source: "b", Destination: "gs://b/b", Status: "resumed", Bytes: 20, ResumedFrom: 8})
	r.add(fileRecord{Op: "upload", Source: "c", Destination: "gs://b/c", Status: "skipped", Reason: "unchanged", Bytes: 30})
	r.add(fileRecord{Op: "upload", Source: "d", Destination: "gs://b/d", Status: "failed", Bytes: 40,
		Error: "gave up: PUT https://h/upload?upload_id=SECRET123&x=1: 503"})
	err := r.finish(start.Add(2 * time.Second))
	var fe *failedError
	if !errors.As(err, &fe) || fe.failed != 1 || fe.total != 4 {
		t.Fatalf("finish = %v, want 1 of 4 failed", err)
	}
	var recs []map[string]any
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		recs = append(recs, m)
	}
	if len(recs) != 5 {
		t.Fatalf("%d JSON lines, want 5", len(recs))
	}
	if recs[1]["status"] != "resumed" || recs[1]["resumed_from"] != 8.0 || recs[2]["reason"] != "unchanged" {
		t.Errorf("records: %v", recs[:3])
	}
	if e := recs[3]["error"].(string); strings.Contains(e, "SECRET123") || !strings.Contains(e, "upload_id=REDACTED") {
		t.Errorf("error not redacted: %q", e)
	}
	sum := recs[4]
	want := map[string]float64{"files": 4, "uploaded": 1, "resumed": 1, "skipped": 1, "failed": 1, "bytes": 30, "seconds": 2}
	for k, v := range want {
		if sum[k] != v {
			t.Errorf("summary %s = %v, want %v", k, sum[k], v)
		}
	}
	if sum["type"] != "summary" {
		t.Errorf("summary type %v", sum["type"])
	}
	if !strings.Contains(errb.String(), "gcsput: failed: d -> gs://b/d: gave up") || strings.Contains(errb.String(), "SECRET123") {
		t.Errorf("stderr: %q", errb.String())
	}
}

func TestReporterText(t *testing.T) {
	var out, errb bytes.Buffer
	start := time.Unix(1000, 0)
	r := newReporter(&out, newProgress(&errb, false), false, false, start)
	r.add(fileRecord{Op: "upload", Source: "a", Destination: "gs://b/a", Status: "uploaded", Bytes: 2048})
	r.add(fileRecord{Op: "upload", Source: "b", Destination: "gs://b/b", Status: "resumed", Bytes: 4 << 20, ResumedFrom: 1 << 20})
	r.add(fileRecord{Op: "upload", Source: "c", Destination: "gs://b/c", Status: "skipped", Reason: "exists", Bytes: 1})
	if err := r.finish(start.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	wantOut := "uploaded      2.0 KiB  a -> gs://b/a\n" +
		"resumed       4.0 MiB  b -> gs://b/b (from 1.0 MiB)\n" +
		"skipped           1 B  c -> gs://b/c (exists)\n"
	if out.String() != wantOut {
		t.Errorf("stdout:\n%s\nwant:\n%s", out.String(), wantOut)
	}
	if want := "3 files: 1 uploaded, 1 resumed, 1 skipped, 0 failed; 4.0 MiB in 1.0s (4.0 MiB/s)\n"; errb.String() != want {
		t.Errorf("stderr %q, want %q", errb.String(), want)
	}
	// An interrupted download's bytes show, though it did not finish.
	errb.Reset()
	r = newReporter(&out, newProgress(&errb, false), false, false, start)
	r.add(fileRecord{Op: "download", Source: "gs://b/big", Destination: "big", Status: "interrupted", Transferred: 12476006, Saved: true})
	r.finish(start.Add(time.Second))
	if want := "1 file: 0 failed, 1 interrupted; 0 B in 1.0s; 11.9 MiB transferred\n"; errb.String() != want {
		t.Errorf("interrupted: stderr %q, want %q", errb.String(), want)
	}
}

// syncBuffer is a bytes.Buffer safe for the progress bar's writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestProgressBar(t *testing.T) {
	var w syncBuffer
	p := newProgress(&w, true)
	p.addTotal(4 << 20)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("dir/file%d.bin", i)
			for n := int64(0); n < 1<<20; n += 256 << 10 {
				p.update(name, n, 1<<20)
			}
			p.printf("%s: retry 1/12 in 1s: 503 Service Unavailable\n", name)
			p.end(name, 1<<20, true)
		}()
	}
	wg.Wait()
	p.close()
	out := w.String()
	for _, want := range []string{"dir/file", "4.0 MiB", "100%", "retry 1/12 in 1s: 503 Service Unavailable\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress output lacks %q:\n%q", want, out)
		}
	}
}

func TestProgressHidden(t *testing.T) {
	var w bytes.Buffer
	p := newProgress(&w, false)
	p.addTotal(100)
	p.update("a", 50, 100)
	p.printf("line %d\n", 1)
	p.end("a", 100, true)
	p.close()
	if w.String() != "line 1\n" {
		t.Errorf("hidden progress wrote %q, want only the logged line", w.String())
	}
}

func TestInterruptible(t *testing.T) {
	var errb syncBuffer
	quit := make(chan struct{})
	ctx, stop := interruptible(context.Background(), &errb, func() { close(quit) })
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("first SIGINT did not cancel the context")
	}
	if !errors.Is(context.Cause(ctx), errInterrupted) {
		t.Fatalf("cause %v, want errInterrupted", context.Cause(ctx))
	}
	if code := exitCode(ctx, ctx.Err()); code != exitInterrupted {
		t.Errorf("exit code after interrupt %d, want 130", code)
	}
	select {
	case <-quit:
		t.Fatal("quit after one signal")
	default:
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-quit:
	case <-time.After(5 * time.Second):
		t.Fatal("second SIGINT did not quit")
	}
	if !strings.Contains(errb.String(), "Ctrl-C again to quit at once") {
		t.Errorf("stderr %q", errb.String())
	}
}

func TestExitCode(t *testing.T) {
	bg := context.Background()
	cancelled, cancel := context.WithCancelCause(bg)
	cancel(errInterrupted)
	_, badName := upload.ParseURL("gs://A/x") // a bucket name with an uppercase letter
	tests := []struct {
		ctx  context.Context
		err  error
		want int
	}{
		{bg, nil, 0},
		{bg, usagef("bad"), 2},
		{bg, fmt.Errorf("wrapped: %w", usagef("bad")), 2},
		{bg, &failedError{failed: 1, total: 3}, 1},
		{bg, errors.New("network down"), 1},
		{cancelled, &failedError{failed: 2, total: 3}, 130},
		{bg, fmt.Errorf("x: %w", errInterrupted), 130},
		{bg, fmt.Errorf("upload: %w", upload.ErrBadOption), 2},
		{bg, badName, 2},
		{bg, fmt.Errorf("auth: %w", auth.ErrNoCredentials), 2},
	}
	for _, tt := range tests {
		if got := exitCode(tt.ctx, tt.err); got != tt.want {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

func TestProgressNamesFilesInFlight(t *testing.T) {
	var w syncBuffer
	p := newProgress(&w, true)
	p.addTotal(100)
	p.addTotal(100)
	p.addTotal(100)
	p.printf("a line before any byte moved\n")
	if strings.ContainsAny(w.String(), "⠋⠙⠹|") {
		t.Errorf("a frame was drawn before anything moved: %q", w.String())
	}
	p.update("b", 10, 100)
	p.update("a", 0, 100)
	p.update("c", 5, 100)
	if p.shown != "15 B/300 B 0/3 files a (+2)" {
		t.Errorf("shown %q, want 15 B/300 B 0/3 files a (+2)", p.shown)
	}
	p.update("a", 100, 100) // complete: no longer in flight
	p.end("a", 100, true)
	p.end("c", 100, false) // failed: leaves the list, keeps its 5 bytes
	if p.shown != "115 B/300 B 2/3 files b" || p.sum != 115 {
		t.Errorf("shown %q sum %d, want 2/3 files b and 115", p.shown, p.sum)
	}
	p.update("b", 40, 100) // the server kept less than was sent: done goes down
	p.end("b", 100, true)
	if p.shown != "205 B/300 B 3/3 files done" || p.sum != 205 {
		t.Errorf("shown %q sum %d, want 3/3 files done and 205", p.shown, p.sum)
	}
	p.close()
}

// The rate is measured over a moving window that leaves out the first
// second's burst (kernel buffers): 8 MiB in 0.1 s, then 1 MiB/s, reads 1 MiB/s.
func TestProgressRateWindow(t *testing.T) {
	var w syncBuffer
	p := newProgress(&w, true)
	now := time.Unix(1000, 0)
	p.now = func() time.Time { return now }
	p.addTotal(20 << 20)
	step := func(d time.Duration, sum int64) {
		now = now.Add(d)
		p.update("f", sum, 20<<20)
	}
	step(0, 1)
	step(100*time.Millisecond, 8<<20)
	for i := range 8 {
		step(500*time.Millisecond, 8<<20+int64(i+1)<<19)
	}
	if got := p.rate.PerSecond(); got < 0.99*(1<<20) || got > 1.01*(1<<20) {
		t.Fatalf("rate %.0f B/s, want 1 MiB/s", got)
	}
	if !strings.HasPrefix(p.shown, "12.0 MiB/20.0 MiB 1.0 MiB/s ETA 8s ") {
		t.Errorf("shown %q", p.shown)
	}
}
