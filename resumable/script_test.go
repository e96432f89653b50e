package resumable

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gcsput/gcsput/retry"
	"github.com/gcsput/gcsput/retry/retrytest"
)

// This file holds the test doubles: a scripted RoundTripper whose steps
// read like a trace of the protocol, and a clock that never sleeps.

// step is one scripted exchange: the request expected and the answer.
type step struct {
	want   string // "METHOD Content-Range" ("PUT bytes 0-262143/*"), "POST start", "DELETE"
	status int    // response status; 0 with err set means a transport failure
	rng    string // Range header of a 308
	body   string // response body (JSON)
	err    error  // returned instead of a response
	read   int64  // bytes of the request body to read before answering; -1 all (default 0 means all)
	hdr    http.Header
}

// sent is a request as the script received it.
type sent struct {
	method, contentRange, googHash string
	data                           []byte
	query                          string
	header                         http.Header
}

// script is an http.RoundTripper that plays steps in order and fails the
// test on any unexpected request or unplayed step.
type script struct {
	t     testing.TB
	mu    sync.Mutex
	steps []step
	got   []sent
}

func newScript(t testing.TB, steps ...step) *script {
	s := &script{t: t, steps: steps}
	t.Cleanup(func() {
		if len(s.steps) > 0 {
			t.Errorf("script: %d steps never played, next %q", len(s.steps), s.steps[0].want)
		}
	})
	return s
}

func (s *script) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := sent{method: req.Method, contentRange: req.Header.Get("Content-Range"),
		googHash: req.Header.Get("X-Goog-Hash"), query: req.URL.RawQuery, header: req.Header}
	got := req.Method + " " + rec.contentRange
	switch req.Method {
	case http.MethodPost:
		got = "POST start"
	case http.MethodDelete:
		got = "DELETE"
	}
	if len(s.steps) == 0 {
		s.t.Errorf("script: unexpected request %q", got)
		return nil, fmt.Errorf("script: unexpected request %q", got)
	}
	st := s.steps[0]
	s.steps = s.steps[1:]
	if got != st.want {
		s.t.Errorf("script: request %d is %q, want %q", len(s.got)+1, got, st.want)
	}
	if req.Body != nil {
		r := io.Reader(req.Body)
		if st.read > 0 {
			r = io.LimitReader(r, st.read)
		}
		rec.data, _ = io.ReadAll(r)
		req.Body.Close()
	}
	s.got = append(s.got, rec)
	if st.err != nil {
		return nil, st.err
	}
	resp := &http.Response{StatusCode: st.status, Header: http.Header{}, Request: req,
		Body: io.NopCloser(strings.NewReader(st.body))}
	for k, v := range st.hdr {
		resp.Header[k] = v
	}
	if st.rng != "" {
		resp.Header.Set("Range", st.rng)
	}
	return resp, nil
}

// testClient returns a Client whose requests go to rt and whose retries
// never sleep, and the events it emitted.
func testClient(t testing.TB, rt http.RoundTripper, chunk int) (*Client, *retrytest.Clock, *[]Event) {
	t.Helper()
	clk := retrytest.NewClock()
	var events []Event
	c, err := New(Options{
		HTTPClient: &http.Client{Transport: rt},
		Endpoint:   "http://127.0.0.1:1",
		ChunkSize:  chunk,
		Retry:      &retry.Runner{Clock: clk, Rand: retrytest.Fixed(0.5)},
		OnEvent:    func(e Event) { events = append(events, e) },
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, clk, &events
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// testData returns n deterministic bytes.
func testData(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// objJSON is the JSON GCS returns for a finished object holding data.
func objJSON(data []byte) string {
	return fmt.Sprintf(`{"bucket":"bkt","name":"o","generation":"7","size":"%d","crc32c":%q}`,
		len(data), EncodeCRC32C(crc32.Checksum(data, castagnoli)))
}

// session is a fresh session as Start would return it.
func testSession(size int64, chunk int) *Session {
	return &Session{URI: "http://127.0.0.1:1/upload/storage/v1/b/bkt/o?uploadType=resumable&upload_id=SECRETID42",
		Bucket: "bkt", Object: "o", Size: size, ChunkSize: chunk, Created: time.Now(), fresh: true}
}

// checkSent asserts that every chunk request carried the source bytes its
// Content-Range names.
func checkSent(t testing.TB, got []sent, data []byte) {
	t.Helper()
	for i, r := range got {
		cr, err := parseContentRange(r.contentRange)
		if r.method != http.MethodPut || err != nil || cr.First < 0 {
			continue
		}
		want := data[cr.First : cr.Last+1]
		if len(r.data) > len(want) || !bytes.Equal(r.data, want[:len(r.data)]) {
			t.Errorf("request %d (%s): body differs from source", i+1, r.contentRange)
		}
	}
}
