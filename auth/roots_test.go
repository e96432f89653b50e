package auth

import (
	"testing"
	"time"
)

// NewTransport starts loading the system's certificate roots, so that the
// first TLS handshake does not read and parse them after the server's
// certificate arrived (25-30 ms, more than a round trip to GCS). The test
// waits for the load that making a transport started; the deadline only
// ends a test in which nothing started it.
func TestNewTransportLoadsRootsAhead(t *testing.T) {
	NewTransport(0)
	select {
	case <-rootsLoaded:
	case <-time.After(time.Minute):
		t.Fatal("a minute after NewTransport the system roots are not loaded: nothing started loading them")
	}
}
