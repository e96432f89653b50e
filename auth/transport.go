package auth

import (
	"net"
	"net/http"
	"time"
)

// DefaultParallelism is gcsput's default number of concurrent transfers, and the
// number a transport is sized for when the caller does not say. It is defined
// here, the lowest package that needs it; upload.DefaultParallelism is this constant.
const DefaultParallelism = 8

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
