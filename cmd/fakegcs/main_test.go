package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

func TestRunServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"-bucket", "bkt", "-faults", "status:op=storage.buckets.get,status=503"}, pw, &stderr)
		pw.Close()
	}()
	url, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("first line %q, %v", url, err)
	}
	url = strings.TrimSpace(url)
	for _, want := range []int{503, 200} { // the scripted fault, then the bucket
		res, err := http.Get(url + "/storage/v1/b/bkt")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Fatalf("status %d, want %d", res.StatusCode, want)
		}
	}
	cancel()
	go io.Copy(io.Discard, pr)
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if _, err := http.Get(url + "/storage/v1/b/bkt"); err == nil {
		t.Fatal("still serving after stop")
	}
}

func TestRunBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-nope"}, {"-faults", "boom"}, {"extra"}, {"-cap-rate", "-1"}, {"-cap-rate", "fast"}, {"-rtt", "-1ms"}, {"-rtt", "20"}, {"-h2", "maybe"}, {"-rewrite-per-call", "1500K"}, {"-rewrite-per-call", "-1M"}} {
		var out, errOut strings.Builder
		if code := run(context.Background(), args, &out, &errOut); code != 2 || out.Len() != 0 {
			t.Errorf("%q: exit %d, stdout %q", args, code, out.String())
		}
	}
	var out, errOut strings.Builder
	if code := run(context.Background(), []string{"-backend", "tape"}, &out, &errOut); code != 1 {
		t.Errorf("bad backend: exit %d", code)
	}
}

func TestCapRateFlag(t *testing.T) {
	for in, want := range map[string]int64{"50M": 50 << 20, "0": 0, "65536": 65536} {
		cfg, err := parseFlags([]string{"-cap-rate", in}, io.Discard)
		if err != nil || cfg.opts.CapRate != want {
			t.Errorf("-cap-rate %s: %d, %v; want %d", in, cfg.opts.CapRate, err, want)
		}
	}
	if cfg, err := parseFlags(nil, io.Discard); err != nil || cfg.opts.CapRate != 0 {
		t.Errorf("default: %d, %v; want 0 (no cap)", cfg.opts.CapRate, err)
	}
}

func TestRewritePerCallFlag(t *testing.T) {
	for in, want := range map[string]int64{"4M": 4 << 20, "0": 0, "1048576": 1 << 20} {
		cfg, err := parseFlags([]string{"-rewrite-per-call", in}, io.Discard)
		if err != nil || cfg.opts.RewriteBytesPerCall != want {
			t.Errorf("-rewrite-per-call %s: %d, %v; want %d", in, cfg.opts.RewriteBytesPerCall, err, want)
		}
	}
}

// -h2 (default on) and -rtt reach the options: -h2=false offers http/1.1
// only, -rtt takes a Go duration.
func TestWireFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"-tls", "-h2=false", "-rtt", "20ms"}, io.Discard)
	if err != nil || !cfg.opts.TLS || !cfg.opts.HTTP1Only || cfg.opts.RTT != 20*time.Millisecond {
		t.Errorf("-tls -h2=false -rtt 20ms: %+v, %v", cfg.opts, err)
	}
	cfg, err = parseFlags([]string{"-tls"}, io.Discard)
	if err != nil || cfg.opts.HTTP1Only || cfg.opts.RTT != 0 {
		t.Errorf("default: HTTP1Only %v, RTT %v, %v; want h2 offered and no RTT", cfg.opts.HTTP1Only, cfg.opts.RTT, err)
	}
	if w := wire(fakegcs.Options{TLS: true, RTT: 20 * time.Millisecond, CapRate: 100}); w != "h2 and HTTP/1.1 over TLS, RTT 20ms, 100 B/s per connection" {
		t.Errorf("wire: %q", w)
	}
}

func TestLimitFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"-write-rate", "300", "-write-burst", "150", "-read-rate", "5000", "-limit-status", "503",
		"-doubling", "2s", "-object-interval", "1s", "-link-rate", "20M"}, io.Discard)
	want := fakegcs.Limits{WriteRate: 300, WriteBurst: 150, ReadRate: 5000, Status: 503, Doubling: 2 * time.Second,
		ObjectInterval: time.Second, LinkRate: 20 << 20}
	if err != nil || cfg.opts.Limits != want {
		t.Fatalf("limits %+v, %v; want %+v", cfg.opts.Limits, err, want)
	}
	for _, args := range [][]string{{"-write-rate", "-1"}, {"-limit-status", "500"}, {"-doubling", "-1s"}, {"-link-rate", "-1"}, {"-link-rate", "fast"}} {
		var out, errOut strings.Builder
		if code := run(context.Background(), args, &out, &errOut); code != 2 || out.Len() != 0 || errOut.Len() == 0 {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut.String())
		}
	}
}
