package fakegcs_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

// wire is one of the wires a fault test runs over: plain HTTP/1.1, as
// fakegcs served before it offered HTTP/2, and TLS offering h2 as GCS does,
// which Server.Client (like any default Go transport) takes.
type wire struct {
	name  string
	tls   bool
	proto string // what every request must arrive as
}

var wires = []wire{{"http1", false, "HTTP/1.1"}, {"h2", true, "HTTP/2.0"}}

// forWires runs test once per wire, as a subtest, with the options to start
// its server with; at the end it checks that every API request arrived
// over the wire's protocol.
func forWires(t *testing.T, test func(t *testing.T, opts fakegcs.Options) *fakegcs.Server) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv := test(t, fakegcs.Options{TLS: w.tls, Buckets: []string{"bkt"}})
			if srv == nil {
				return
			}
			for proto, p := range srv.Stats().Protocols {
				if proto != w.proto && p.Requests > 0 {
					t.Errorf("%d requests over %s, want %s only", p.Requests, proto, w.proto)
				}
			}
		})
	}
}

// isStreamReset reports whether err is an HTTP/2 stream reset by the
// server, as net/http's h2 client reports it (its type is unexported).
func isStreamReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "stream error") &&
		strings.Contains(err.Error(), "INTERNAL_ERROR; received from peer")
}

// With TLS the server offers h2 and a default Go client takes it; with
// HTTP1Only, or without TLS, the same client gets HTTP/1.1.
func TestALPN(t *testing.T) {
	cases := []struct {
		opts        fakegcs.Options
		proto, alpn string
	}{
		{fakegcs.Options{TLS: true}, "HTTP/2.0", "h2"},
		{fakegcs.Options{TLS: true, HTTP1Only: true}, "HTTP/1.1", "http/1.1"},
		{fakegcs.Options{}, "HTTP/1.1", ""},
	}
	for _, tc := range cases {
		srv := fakegcs.NewTest(t, tc.opts)
		res, err := srv.Client().Get(srv.URL() + "/_fakegcs/healthz")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		alpn := ""
		if res.TLS != nil {
			alpn = res.TLS.NegotiatedProtocol
		}
		if res.Proto != tc.proto || alpn != tc.alpn {
			t.Errorf("%+v: %s with ALPN %q, want %s with %q", tc.opts, res.Proto, alpn, tc.proto, tc.alpn)
		}
	}
}

// get reads url with hc and returns the response's protocol.
func get(t *testing.T, hc *http.Client, url string) string {
	t.Helper()
	res, err := hc.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil || res.StatusCode != 200 {
		t.Fatalf("GET %s: %d, %v", url, res.StatusCode, err)
	}
	return res.Proto
}

// Stats count the connections accepted and, per protocol, the requests and
// the connections that carried them: eight parallel requests share one
// HTTP/2 connection; over HTTP/1.1 without keep-alive each has its own.
// After ResetStats an open connection counts again when it is used.
func TestStatsConnectionsAndProtocols(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{TLS: true, Buckets: []string{"bkt"}})
	srv.PutObject("bkt", "o", randBytes(1000, 1))
	hc := srv.Client()
	get(t, hc, srv.URL()+"/bkt/o") // the connection, so that the parallel GETs share it
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { get(t, hc, srv.URL()+"/bkt/o") })
	}
	wg.Wait()
	st := srv.Stats()
	if st.Connections != 1 || len(st.Protocols) != 1 || st.Protocols["HTTP/2.0"] != (fakegcs.ProtoStats{Requests: 9, Connections: 1}) {
		t.Fatalf("h2: %d connections, protocols %+v; want 1, 9 requests on 1 HTTP/2.0 connection", st.Connections, st.Protocols)
	}
	srv.ResetStats()
	get(t, hc, srv.URL()+"/bkt/o")
	if st := srv.Stats(); st.Connections != 0 || st.Protocols["HTTP/2.0"] != (fakegcs.ProtoStats{Requests: 1, Connections: 1}) {
		t.Fatalf("after ResetStats: %d accepted, protocols %+v; want 0 and 1 request on 1 connection", st.Connections, st.Protocols)
	}

	h1 := fakegcs.NewTest(t, fakegcs.Options{TLS: true, HTTP1Only: true, Buckets: []string{"bkt"}})
	h1.PutObject("bkt", "o", randBytes(1000, 1))
	tr := h1.Client().Transport.(*http.Transport).Clone()
	tr.DisableKeepAlives = true
	for range 3 {
		get(t, &http.Client{Transport: tr}, h1.URL()+"/bkt/o")
	}
	if st := h1.Stats(); st.Connections != 3 || len(st.Protocols) != 1 || st.Protocols["HTTP/1.1"] != (fakegcs.ProtoStats{Requests: 3, Connections: 3}) {
		t.Fatalf("http/1.1: %d connections, protocols %+v; want 3 requests on 3 connections", st.Connections, st.Protocols)
	}
}

// The RTT delays what the server writes, so each exchange that waits for
// the server pays it at least once: a request on a warm connection one RTT,
// a first request over TLS two (the handshake, then the request), an
// upload of three times the server's 1 MiB HTTP/2 window at least two (its
// WINDOW_UPDATEs travel too). Lower bounds only: a slow machine only adds.
func TestRTT(t *testing.T) {
	const rtt = 50 * time.Millisecond
	elapsed := func(f func()) time.Duration {
		start := time.Now()
		f()
		return time.Since(start)
	}
	for _, tlsOn := range []bool{false, true} {
		srv := fakegcs.NewTest(t, fakegcs.Options{TLS: tlsOn, RTT: rtt, Buckets: []string{"bkt"}})
		srv.PutObject("bkt", "o", randBytes(1000, 1))
		hc := srv.Client()
		first := 1
		if tlsOn {
			first = 2
		}
		if d := elapsed(func() { get(t, hc, srv.URL()+"/bkt/o") }); d < time.Duration(first)*rtt {
			t.Errorf("TLS %v: a first request took %v, want at least %d RTT (%v)", tlsOn, d, first, time.Duration(first)*rtt)
		}
		if d := elapsed(func() { get(t, hc, srv.URL()+"/bkt/o") }); d < rtt {
			t.Errorf("TLS %v: a request on a warm connection took %v, want at least the RTT", tlsOn, d)
		}
		if !tlsOn {
			continue
		}
		data := randBytes(3<<20, 2)
		var res *http.Response
		d := elapsed(func() {
			var err error
			res, err = hc.Post(srv.URL()+"/upload/storage/v1/b/bkt/o?uploadType=media&name=up", "application/octet-stream", bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
		})
		t.Logf("3 MiB upload over %s with RTT %v: %v", res.Proto, rtt, d)
		if res.StatusCode != 200 || res.Proto != "HTTP/2.0" || d < 2*rtt {
			t.Errorf("3 MiB upload over %s: %d in %v, want 200 over HTTP/2.0 in at least 2 RTT", res.Proto, res.StatusCode, d)
		}
		if st := srv.Stats(); st.Connections != 1 {
			t.Errorf("%d connections, want 1", st.Connections)
		}
	}
}

// throttledGet starts a download of b/name that the server sends slowly
// (a throttle fault), reads its first KiB and returns the body.
func throttledGet(t *testing.T, srv *fakegcs.Server, name string, size int) io.ReadCloser {
	t.Helper()
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Object: name, Kind: fakegcs.KindThrottle, BytesPerSecond: int64(size)})
	res, err := srv.Client().Get(srv.URL() + "/bkt/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if res.Proto != "HTTP/2.0" {
		t.Fatalf("%s, want HTTP/2.0", res.Proto)
	}
	if _, err := io.ReadFull(res.Body, make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	return res.Body
}

// Over HTTP/2 a reset is a stream's: the reset request fails with
// RST_STREAM while a download on the same connection, still being sent,
// ends byte-exact, and the connection serves on.
func TestResetOverHTTP2(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{TLS: true, Buckets: []string{"bkt"}})
	data := randBytes(1<<20, 4)
	srv.PutObject("bkt", "a", data)
	srv.PutObject("bkt", "b", []byte("hello"))
	body := throttledGet(t, srv, "a", len(data)) // about a second
	defer body.Close()
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Object: "b", Kind: fakegcs.KindReset})
	if _, err := srv.Client().Get(srv.URL() + "/bkt/b"); !isStreamReset(err) {
		t.Fatalf("reset: %v, want a stream reset", err)
	}
	rest, err := io.ReadAll(body)
	if err != nil || !bytes.Equal(append(data[:1024:1024], rest...), data) {
		t.Fatalf("the other stream: %d bytes, %v; want the rest of %d", len(rest), err, len(data))
	}
	if p := get(t, srv.Client(), srv.URL()+"/bkt/b"); p != "HTTP/2.0" {
		t.Fatalf("after the reset: %s", p)
	}
	if st := srv.Stats(); st.Connections != 1 || st.Protocols["HTTP/2.0"].Requests != 3 {
		t.Fatalf("%d connections, protocols %+v; want 3 requests on 1", st.Connections, st.Protocols)
	}
}

// Over HTTP/2 a dropped response drops the connection: the download
// sharing it fails too, after the request that dropped was processed in
// full, and the next request opens a new connection.
func TestDropOverHTTP2(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{TLS: true, Buckets: []string{"bkt"}})
	data := randBytes(1<<20, 5)
	srv.PutObject("bkt", "a", data)
	srv.PutObject("bkt", "b", []byte("hello"))
	body := throttledGet(t, srv, "a", len(data))
	defer body.Close()
	srv.Inject(fakegcs.Fault{Op: "storage.objects.delete", Kind: fakegcs.KindDropResponse})
	req, _ := http.NewRequest("DELETE", srv.URL()+"/storage/v1/b/bkt/o/b", nil)
	if res, err := srv.Client().Do(req); err == nil {
		res.Body.Close()
		t.Fatalf("dropped delete answered %d", res.StatusCode)
	}
	if _, err := io.ReadAll(body); err == nil {
		t.Fatal("the download on the dropped connection ended without an error")
	}
	if _, _, err := srv.Object("bkt", "b"); err == nil {
		t.Fatal("the dropped delete was not processed")
	}
	get(t, srv.Client(), srv.URL()+"/_fakegcs/healthz")
	if st := srv.Stats(); st.Connections != 2 {
		t.Fatalf("%d connections, want 2 (the dropped one and a new one)", st.Connections)
	}
}

// Over HTTP/2 a truncated download delivers exactly the bytes before the
// cut, then the stream is reset.
func TestTruncateOverHTTP2(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{TLS: true, Buckets: []string{"bkt"}})
	data := randBytes(1<<20, 6)
	srv.PutObject("bkt", "o", data)
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Kind: fakegcs.KindTruncate, AfterBytes: 300000})
	res, err := srv.Client().Get(srv.URL() + "/bkt/o")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	got, err := io.ReadAll(res.Body)
	if res.Proto != "HTTP/2.0" || !isStreamReset(err) || !bytes.Equal(got, data[:300000]) {
		t.Fatalf("%s: %d bytes, %v; want the first 300000 over HTTP/2.0, then a stream reset", res.Proto, len(got), err)
	}
}

// A stall over HTTP/2 holds its stream only; a request on the same
// connection is answered meanwhile.
func TestStallOverHTTP2(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{TLS: true, Buckets: []string{"bkt"}})
	srv.PutObject("bkt", "o", randBytes(64<<10, 7))
	get(t, srv.Client(), srv.URL()+"/bkt/o")
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Kind: fakegcs.KindStall, Delay: time.Hour, AfterBytes: 1000})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL()+"/bkt/o", nil)
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if _, err := io.ReadFull(res.Body, make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	get(t, srv.Client(), srv.URL()+"/storage/v1/b/bkt/o/o") // while the stream above stalls
	if st := srv.Stats(); st.Connections != 1 || st.Protocols["HTTP/2.0"].Requests != 3 {
		t.Fatalf("%d connections, protocols %+v; want 3 requests on 1", st.Connections, st.Protocols)
	}
}
