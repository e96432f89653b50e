package upload

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/fakegcs"
)

// benchClient is a Client with the production defaults (16 MiB chunks, the
// real retry policy) against srv, without saved state.
func benchClient(b *testing.B, srv *fakegcs.Server, parallelism int) *Client {
	c, err := New(context.Background(), Options{Endpoint: srv.URL(), Auth: auth.Options{NoAuth: true},
		NoState: true, Parallelism: parallelism})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

// BenchmarkUploadSmallFiles uploads a directory of 2,000 files of 16 KiB
// with 32 files at a time; the figure is files/s.
func BenchmarkUploadSmallFiles(b *testing.B) {
	const files = 2000
	dir := b.TempDir()
	for i := range files {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d", i)), randBytes(16<<10, uint64(i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	srv := newServer(b, fakegcs.Options{DisableMD5: true})
	c := benchClient(b, srv, 32)
	b.SetBytes(files * 16 << 10)
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.UploadDir(context.Background(), dir, URL{testBucket, "small"}, UploadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(files*b.N)/b.Elapsed().Seconds(), "files/s")
}

// BenchmarkUploadLargeFile uploads one 256 MiB file in 16 MiB chunks to a
// fakegcs that keeps only hashes (so the server's memory is not measured);
// the figure is MB/s.
func BenchmarkUploadLargeFile(b *testing.B) {
	const size = 256 << 20
	p := filepath.Join(b.TempDir(), "big.bin")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	for i := range size / (16 << 20) {
		f.Write(randBytes(16<<20, uint64(i)))
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	srv := newServer(b, fakegcs.Options{Backend: fakegcs.BackendDiscard, DisableMD5: true})
	c := benchClient(b, srv, 1)
	b.SetBytes(size)
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.UploadFile(context.Background(), p, URL{testBucket, "big.bin"}, UploadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompositeRoundTrips uploads a file of 8 components of 17 MiB
// (more than one default chunk each) as a new process would (a new Client:
// new connections, the bucket's settings not yet read) over TLS to a
// fakegcs 300 ms away with no rate cap, so the time is almost all round
// trips on the critical path; the figure is their number, rtt/op
// (docs/performance.md, "Filling the link").
func BenchmarkCompositeRoundTrips(b *testing.B) {
	const rtt, per, n = 300 * time.Millisecond, 17 << 20, 8
	srv := newServer(b, fakegcs.Options{TLS: true, RTT: rtt, Backend: fakegcs.BackendDiscard, DisableMD5: true})
	p := filepath.Join(b.TempDir(), "big.bin")
	if err := os.WriteFile(p, randBytes(n*per, 3), 0o644); err != nil {
		b.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(srv.CertPEM())
	for b.Loop() {
		tr := auth.NewTransport(n)
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
		rt, err := auth.ForProtocol(tr, auth.DefaultProtocol, 0, 0)
		if err != nil {
			b.Fatal(err)
		}
		c, err := New(context.Background(), Options{Endpoint: srv.URL(), HTTPClient: &http.Client{Transport: rt}, Parallelism: n,
			StateDir: filepath.Join(b.TempDir(), "state"), ParallelThreshold: per, ComponentSize: per})
		if err != nil {
			b.Fatal(err)
		}
		r, err := c.UploadFile(context.Background(), p, URL{testBucket, "o"}, UploadOptions{})
		if err != nil || r.Note != fmt.Sprintf("composite of %d components", n) {
			b.Fatal(r.Note, err)
		}
		c.Close()
		tr.CloseIdleConnections()
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/rtt.Seconds(), "rtt/op")
}
