package auth

import (
	"crypto/x509"
	"net"
	"net/http"
	"sync"
	"time"
)

// DefaultParallelism is gcsput's default number of concurrent transfers, and the
// number a transport is sized for when the caller does not say. It is defined
// here, the lowest package that needs it; upload.DefaultParallelism is this constant.
// It is 12, settled on the wire model of a bucket with a capacity and a link
// of 60 ms and 20 MB/s a connection (docs/performance.md, "How many streams
// pay"): against 8, a large file moves 1.1–1.2× the bytes and a bucket
// that grows is followed (1.06–1.14× its capacity, against 0.86–0.87×),
// while at 16 two processes on one bucket met three times the refusals.
const DefaultParallelism = 12

// NewTransport returns an HTTP transport for parallelism concurrent transfers
// to one host (0 means DefaultParallelism): keep-alive connections, at least
// parallelism of them kept idle per host (net/http keeps only 2 by default,
// which makes parallel uploads reconnect all the time), 64 KiB socket
// buffers so large request bodies go out in few writes, and HTTP/1.1 only
// (DefaultProtocol; [ForProtocol] changes it).
func NewTransport(parallelism int) *http.Transport {
	if parallelism <= 0 {
		parallelism = DefaultParallelism
	}
	loadRootsAhead()
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	// A worker may hold one upload connection and one metadata call at once.
	t.MaxIdleConnsPerHost = 2 * parallelism
	t.MaxIdleConns = max(t.MaxIdleConns, 4*parallelism)
	t.IdleConnTimeout = 90 * time.Second
	t.DisableKeepAlives = false
	t.WriteBufferSize = 64 << 10
	t.ReadBufferSize = 64 << 10
	t.ForceAttemptHTTP2 = false
	t.Protocols = new(http.Protocols)
	t.Protocols.SetHTTP1(true)
	return t
}

// The system's certificate roots, which verify every TLS connection that
// names no roots of its own (RootCAs nil, as NewTransport's), are read and
// parsed once per process, at the first handshake, after the server's
// certificate arrived: 25-30 ms for the 300 roots of a Debian image, more
// than a round trip to GCS within a region, on the path of every command's
// first request. loadRootsAhead starts that load when a transport is made,
// so it runs during the dial and the handshake's first round trip; the
// handshake that needs them waits only for what is left (crypto/x509 loads
// them under a sync.Once). rootsLoaded is closed once they are.
var (
	rootsOnce   sync.Once
	rootsLoaded = make(chan struct{})
)

func loadRootsAhead() {
	rootsOnce.Do(func() {
		go func() { // ends with the load: it holds nothing and waits for nothing
			defer close(rootsLoaded)
			_, _ = x509.SystemCertPool() // an error is the handshake's to report
		}()
	})
}
