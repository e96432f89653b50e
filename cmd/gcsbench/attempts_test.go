package main

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// step is one scripted attempt: the request, when it starts (seconds on a
// fake clock), and how it ends: a status with a body that is read to its
// end, a transport error, or a body cut after some bytes.
type step struct {
	at     float64
	method string
	url    string
	status int
	err    error // of the transport
	cut    bool  // the body breaks
}

// scripted answers each request with its step.
type scripted struct{ steps []step }

func (s *scripted) RoundTrip(req *http.Request) (*http.Response, error) {
	st := s.steps[0]
	s.steps = s.steps[1:]
	if st.err != nil {
		return nil, st.err
	}
	var body io.Reader = strings.NewReader("payload")
	if st.cut {
		body = io.MultiReader(strings.NewReader("pay"), errReader{io.ErrUnexpectedEOF})
	}
	return &http.Response{StatusCode: st.status, Body: io.NopCloser(body), Request: req}, nil
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestAttemptsCountsRetriesAndGaps(t *testing.T) {
	steps := []step{
		{at: 0, method: "POST", url: "/upload/storage/v1/b/b/o?uploadType=resumable&name=big", status: 200},
		{at: 1, method: "PUT", url: "/upload/storage/v1/b/b/o?uploadType=resumable&upload_id=S", status: 503},
		{at: 3, method: "PUT", url: "/upload/storage/v1/b/b/o?uploadType=resumable&upload_id=S", status: 308}, // retry after 2 s
		{at: 4, method: "PUT", url: "/upload/storage/v1/b/b/o?uploadType=resumable&upload_id=S", err: syscall.ECONNRESET},
		{at: 6.5, method: "PUT", url: "/upload/storage/v1/b/b/o?uploadType=resumable&upload_id=S", status: 200}, // after 2.5 s
		{at: 10, method: "GET", url: "/storage/v1/b/b/o/big?alt=media", status: 200, cut: true},
		{at: 10, method: "GET", url: "/storage/v1/b/b/o/other?alt=media", status: 200},  // another object: no retry
		{at: 10.25, method: "GET", url: "/storage/v1/b/b/o/big?alt=media", status: 206}, // after 0.25 s
		{at: 11, method: "POST", url: "/upload/storage/v1/b/b/o?uploadType=resumable&name=small", status: 429},
		{at: 12, method: "POST", url: "/upload/storage/v1/b/b/o?uploadType=resumable&name=small", status: 200}, // after 1 s
		{at: 13, method: "GET", url: "/storage/v1/b/b/o/big", status: 404},                                     // not a failure a client retries
		{at: 14, method: "GET", url: "/storage/v1/b/b/o/big", status: 200},
	}
	var now float64
	clock := func() time.Time { return time.Unix(0, 0).Add(time.Duration(now * float64(time.Second))) }
	a := newAttempts(&scripted{steps: append([]step(nil), steps...)})
	a.now = clock
	for _, st := range steps {
		now = st.at
		req, err := http.NewRequest(st.method, "http://127.0.0.1"+st.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := a.RoundTrip(req)
		if !errors.Is(err, st.err) {
			t.Fatalf("%s %s: error %v, want %v", st.method, st.url, err, st.err)
		}
		if err != nil {
			continue
		}
		_, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if st.cut != (rerr != nil) {
			t.Fatalf("%s %s: read error %v", st.method, st.url, rerr)
		}
	}
	retries, slept := a.totals()
	if retries != 4 || slept != 5750*time.Millisecond {
		t.Errorf("retries %d, slept %v; want 4, 5.75s", retries, slept)
	}
}

// A failed status ends its attempt when its body is closed unread, and a
// body closed before its end on a good status is no failure (the client
// stopped reading: a range it had).
func TestAttemptsEndAtClose(t *testing.T) {
	var now float64
	a := newAttempts(&scripted{steps: []step{
		{status: 500}, {status: 200}, {status: 200}, {status: 200},
	}})
	a.now = func() time.Time { return time.Unix(0, 0).Add(time.Duration(now * float64(time.Second))) }
	get := func(at float64, read bool) {
		now = at
		req, _ := http.NewRequest("GET", "http://127.0.0.1/b/o", nil)
		resp, err := a.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		now = at + 0.5
		if read {
			io.ReadAll(resp.Body)
		}
		resp.Body.Close()
	}
	get(0, false) // 500, closed at 0.5
	get(2, false) // a retry 1.5 s later; 200 closed early
	get(3, true)  // no retry
	get(4, false) // no retry
	if retries, slept := a.totals(); retries != 1 || slept != 1500*time.Millisecond {
		t.Errorf("retries %d, slept %v; want 1, 1.5s", retries, slept)
	}
}
