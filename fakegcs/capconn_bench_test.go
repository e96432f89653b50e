package fakegcs_test

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

// BenchmarkCapRate downloads 4 MiB over 1, 2 and 4 connections at once
// from a server capped at 16 MiB/s per connection, in real time: MiB/s/conn
// should stay near 16 while the aggregate (MB/s) grows with the
// connections. It is a benchmark, not a test, because it measures wall
// time; TestCapPerConnection checks the same with a virtual clock.
func BenchmarkCapRate(b *testing.B) {
	const size, capRate = 4 << 20, 16 << 20
	for _, conns := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) {
			srv := fakegcs.NewTest(b, fakegcs.Options{Buckets: []string{"bkt"}, Backend: fakegcs.BackendDiscard, CapRate: capRate})
			if _, err := srv.PutObject("bkt", "o", make([]byte, size)); err != nil {
				b.Fatal(err)
			}
			clients := make([]*http.Client, conns) // a connection each
			for i := range clients {
				clients[i] = &http.Client{Transport: srv.Client().Transport.(*http.Transport).Clone()}
			}
			b.SetBytes(int64(size * conns))
			var busy time.Duration
			for b.Loop() {
				start := time.Now()
				var wg sync.WaitGroup
				for _, hc := range clients {
					wg.Go(func() { benchDownload(b, hc, srv.URL()+"/bkt/o", size) })
				}
				wg.Wait()
				busy += time.Since(start)
			}
			b.ReportMetric(float64(size)*float64(b.N)/busy.Seconds()/(1<<20), "MiB/s/conn")
		})
	}
}

func benchDownload(b *testing.B, hc *http.Client, url string, size int64) {
	res, err := hc.Get(url)
	if err != nil {
		b.Error(err)
		return
	}
	defer res.Body.Close()
	if n, err := io.Copy(io.Discard, res.Body); err != nil || n != size {
		b.Errorf("downloaded %d bytes, %v", n, err)
	}
}
