package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// The wire promise (docs/performance.md, "The wire"): against a TLS endpoint that offers
// h2 and http/1.1, as GCS does, gcsput speaks HTTP/1.1 by default, so its
// parallel data streams each have a connection of their own, and keeps
// those connections alive, so a burst of small files pays no TLS handshake
// per request. --client-protocol http2 multiplexes instead.

// wireRun runs gcsput against srv over TLS, trusting its certificate.
func wireRun(t *testing.T, srv *fakegcs.Server, dir string, args ...string) {
	t.Helper()
	cert := filepath.Join(dir, "fakegcs.pem")
	if err := os.WriteFile(cert, srv.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gcsputBin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_STATE_HOME=" + filepath.Join(dir, ".state"),
		"STORAGE_EMULATOR_HOST=" + srv.URL(), "SSL_CERT_FILE=" + cert}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("gcsput %v: %v\n%s", args, err, out.String())
	}
}

func wireServer(t *testing.T, capRate int64) *fakegcs.Server {
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	t.Parallel()
	return fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, TLS: true, CapRate: capRate})
}

func writeFiles(t *testing.T, dir string, n, size int) {
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", i)), bytes.Repeat([]byte{byte(i)}, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Eight files of 1 MiB at -j 8, each connection held to 2 MB/s so all eight
// are in flight together: eight HTTP/1.1 connections or more (one each),
// never HTTP/2, and not many more (a dial raced by a connection coming back
// to the pool is kept, up to 2 × -j idle).
func TestWireParallelStreamsTakeAConnectionEach(t *testing.T) {
	srv := wireServer(t, 2<<20)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.Mkdir(src, 0o755)
	writeFiles(t, src, 8, 1<<20)
	wireRun(t, srv, dir, "cp", "-r", "-j", "8", "--no-progress", "src", "gs://bkt/p/")
	st := srv.Stats()
	h1 := st.Protocols["HTTP/1.1"]
	if st.Protocols["HTTP/2.0"].Requests != 0 || h1.Connections < 8 || st.Connections > 24 {
		t.Fatalf("8 parallel uploads: %d connections, by protocol %+v; want 8 to 24 HTTP/1.1 connections and no HTTP/2", st.Connections, st.Protocols)
	}
	for i := range 8 {
		if b, _, err := srv.Object("bkt", fmt.Sprintf("p/src/f%03d", i)); err != nil || !bytes.Equal(b, bytes.Repeat([]byte{byte(i)}, 1<<20)) {
			t.Fatalf("p/src/f%03d: %d bytes, %v", i, len(b), err)
		}
	}
}

// --client-protocol http2 takes what the server offers: every request is
// an HTTP/2 stream.
func TestWireHTTP2WhenAsked(t *testing.T) {
	srv := wireServer(t, 0)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.Mkdir(src, 0o755)
	writeFiles(t, src, 8, 64<<10)
	wireRun(t, srv, dir, "cp", "-r", "-j", "8", "--no-progress", "--client-protocol", "http2", "src", "gs://bkt/p/")
	st := srv.Stats()
	if st.Protocols["HTTP/1.1"].Requests != 0 || st.Protocols["HTTP/2.0"].Requests < 8 {
		t.Fatalf("by protocol %+v; want only HTTP/2", st.Protocols)
	}
}

// 300 small files at -j 8 reuse kept-alive connections: far fewer TLS
// handshakes than requests (8 needed, 2 × -j kept idle; at most one per 7
// requests is allowed for the dials a loaded machine races).
func TestWireSmallFilesReuseConnections(t *testing.T) {
	srv := wireServer(t, 0)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.Mkdir(src, 0o755)
	writeFiles(t, src, 300, 100)
	wireRun(t, srv, dir, "cp", "-r", "-j", "8", "--no-progress", "src", "gs://bkt/p/")
	st := srv.Stats()
	if n := requests(st); n < 300 || st.Connections > 40 {
		t.Fatalf("300 small files: %d requests on %d connections; want at most 40 connections", n, st.Connections)
	}
	srv.ResetStats()
	wireRun(t, srv, dir, "cp", "-r", "-j", "8", "--no-progress", "gs://bkt/p/", "back")
	if st := srv.Stats(); requests(st) < 300 || st.Connections > 40 {
		t.Fatalf("300 small downloads: %d requests on %d connections; want at most 40 connections", requests(st), st.Connections)
	}
}

func requests(st fakegcs.Stats) int {
	n := 0
	for _, p := range st.Protocols {
		n += p.Requests
	}
	return n
}
