package resumable

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/gcsput/gcsput/fakegcs"
	"google.golang.org/api/option"
)

// The acceptance benchmarks: 256 MiB in 16 MiB chunks to fakegcs, gcsput's
// resumable upload against the official client's storage.Writer, and
// downloads against storage.Reader, in the same run on the same server.
//
//	go test -run '^$' -bench . -benchtime 3x ./resumable
//
// Each benchmark runs both clients alternately and reports, per client,
// MB/s, alloc-MiB/op (bytes allocated by the process during one transfer)
// and peak-heap-MiB (the highest heap in use above the starting point,
// sampled every 10 ms), and throughput-ratio = gcsput's MB/s / official's.
// fakegcs runs in-process, so its share is in both clients' figures.

const (
	benchSize  = 256 << 20
	benchChunk = 16 << 20
)

// benchFile writes size bytes of non-trivial data to a file in dir.
func benchFile(b *testing.B, size int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "src")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	block := testData(1 << 20)
	for n := 0; n < size; n += len(block) {
		block[0]++ // every MiB differs
		if _, err := f.Write(block); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// memPeak samples the heap while an operation runs.
type memPeak struct {
	start    runtime.MemStats
	peak     atomic.Uint64
	stop     chan struct{}
	wg       sync.WaitGroup
	allocSum uint64
	peakSum  uint64
}

func (m *memPeak) begin() {
	runtime.GC()
	runtime.ReadMemStats(&m.start)
	m.peak.Store(m.start.HeapInuse)
	m.stop = make(chan struct{})
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		var s runtime.MemStats
		for {
			select {
			case <-m.stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			runtime.ReadMemStats(&s)
			if s.HeapInuse > m.peak.Load() {
				m.peak.Store(s.HeapInuse)
			}
		}
	}()
}

func (m *memPeak) end() {
	close(m.stop)
	m.wg.Wait()
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.allocSum += s.TotalAlloc - m.start.TotalAlloc
	m.peakSum += m.peak.Load() - m.start.HeapInuse
}

func benchServer(b *testing.B, backend string) *fakegcs.Server {
	return fakegcs.NewTest(b, fakegcs.Options{Buckets: []string{"bkt"}, Backend: backend, DisableMD5: true})
}

func officialClient(b *testing.B, srv *fakegcs.Server) *storage.Client {
	sc, err := storage.NewClient(context.Background(), option.WithEndpoint(srv.Endpoint()), option.WithoutAuthentication())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sc.Close() })
	return sc
}

// contender is one client's run of the benchmark operation.
type contender struct {
	name string
	run  func() error
	took time.Duration
	mem  memPeak
}

// race runs the contenders alternately, b.N rounds, switching the order
// every round so that a noisy machine hurts both alike, and reports each
// one's throughput and memory and the ratio of the first to the second.
func race(b *testing.B, a, o *contender) {
	round := 0
	for b.Loop() {
		pair := []*contender{a, o}
		if round%2 == 1 {
			pair = []*contender{o, a}
		}
		round++
		for _, c := range pair {
			c.mem.begin()
			start := time.Now()
			err := c.run()
			c.took += time.Since(start)
			c.mem.end()
			if err != nil {
				b.Fatalf("%s: %v", c.name, err)
			}
		}
	}
	for _, c := range []*contender{a, o} {
		b.ReportMetric(float64(round)*benchSize/c.took.Seconds()/1e6, c.name+"-MB/s")
		b.ReportMetric(float64(c.mem.allocSum)/float64(round)/(1<<20), c.name+"-alloc-MiB/op")
		b.ReportMetric(float64(c.mem.peakSum)/float64(round)/(1<<20), c.name+"-peak-heap-MiB")
	}
	b.ReportMetric(o.took.Seconds()/a.took.Seconds(), "throughput-ratio")
}

// BenchmarkUpload256MiB: gcsput's Upload from a file against
// storage.Writer fed by io.Copy from the same file, 16 MiB chunks each, to
// a fakegcs discard backend.
func BenchmarkUpload256MiB(b *testing.B) {
	path := benchFile(b, benchSize)
	srv := benchServer(b, fakegcs.BackendDiscard)
	ctx := context.Background()
	c, err := New(Options{HTTPClient: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()},
		Endpoint: srv.URL(), ChunkSize: benchChunk})
	if err != nil {
		b.Fatal(err)
	}
	sc := officialClient(b, srv)
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	ours := &contender{name: "gcsput", run: func() error {
		s, err := c.Start(ctx, ObjectSpec{Bucket: "bkt", Name: "gcsput", Size: benchSize})
		if err == nil {
			_, err = c.Upload(ctx, s, f)
		}
		return err
	}}
	theirs := &contender{name: "official", run: func() error {
		w := sc.Bucket("bkt").Object("official").NewWriter(ctx)
		w.ChunkSize = benchChunk
		_, err := io.Copy(w, io.NewSectionReader(f, 0, benchSize))
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		return err
	}}
	race(b, ours, theirs)
}

// BenchmarkDownload256MiB: gcsput's Download against storage.Reader, both
// into io.Discard, from a fakegcs memory backend.
func BenchmarkDownload256MiB(b *testing.B) {
	path := benchFile(b, benchSize)
	srv := benchServer(b, fakegcs.BackendMemory)
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := srv.PutObjectFrom(fakegcs.ObjectAttrs{Bucket: "bkt", Name: "big"}, f); err != nil {
		b.Fatal(err)
	}
	f.Close()
	ctx := context.Background()
	c, err := New(Options{HTTPClient: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()},
		Endpoint: srv.URL()})
	if err != nil {
		b.Fatal(err)
	}
	sc := officialClient(b, srv)
	ours := &contender{name: "gcsput", run: func() error {
		res, err := c.Download(ctx, DownloadSpec{Bucket: "bkt", Object: "big"}, io.Discard)
		if err == nil && (!res.Verified || res.Size != benchSize) {
			err = fmt.Errorf("result %+v", res)
		}
		return err
	}}
	theirs := &contender{name: "official", run: func() error {
		r, err := sc.Bucket("bkt").Object("big").NewReader(ctx)
		if err != nil {
			return err
		}
		defer r.Close()
		n, err := io.Copy(io.Discard, r)
		if err == nil && n != benchSize {
			err = fmt.Errorf("read %d bytes", n)
		}
		return err
	}}
	race(b, ours, theirs)
}
