package main

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// attempts is the http.RoundTripper under a Go client's own retry loop
// (gcsput's and the official client's alike), so both are measured the same
// way, whatever they report of themselves: it sees every attempt, and counts
// as a retry each attempt on an object that follows a failed attempt on the
// same object, and as slept the time from the end of the failed attempt to
// the start of the retry (the client's backoff, plus the microseconds it
// takes to build the next request).
//
// An attempt failed when the transport returned an error, when its status is
// one a client retries (408, 429, 5xx: it ends when its body is read or
// closed), or when its body broke before its end (a cut download). Attempts
// belong to the same object when they share an upload session (upload_id),
// else the name of the object being inserted (name=), else the URL path (a
// metadata or media get). Attempts of one object are taken to be one after
// another, as they are for one stream per object; a multipart upload names
// its object in its body, so concurrent multipart uploads share a key.
type attempts struct {
	base http.RoundTripper
	// now is the clock; nil means time.Now.
	now func() time.Time

	mu       sync.Mutex
	failedAt map[string]time.Time // object key → end of its last failed attempt
	retries  int
	slept    time.Duration
}

func newAttempts(base http.RoundTripper) *attempts {
	return &attempts{base: base, failedAt: map[string]time.Time{}}
}

// totals returns the retries and the time slept before them so far.
func (a *attempts) totals() (int, time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.retries, a.slept
}

func (a *attempts) clock() time.Time {
	if a.now != nil {
		return a.now()
	}
	return time.Now()
}

func (a *attempts) RoundTrip(req *http.Request) (*http.Response, error) {
	key := attemptKey(req)
	a.start(key)
	resp, err := a.base.RoundTrip(req)
	if err != nil {
		a.end(key, true)
		return resp, err
	}
	resp.Body = &attemptBody{ReadCloser: resp.Body, a: a, key: key, failed: retryableStatus(resp.StatusCode)}
	return resp, nil
}

// start counts the attempt as a retry if the object's last attempt failed.
func (a *attempts) start(key string) {
	now := a.clock()
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.failedAt[key]
	if !ok {
		return
	}
	delete(a.failedAt, key)
	a.retries++
	if d := now.Sub(t); d > 0 {
		a.slept += d
	}
}

// end records the end of an attempt that failed.
func (a *attempts) end(key string, failed bool) {
	if !failed {
		return
	}
	now := a.clock()
	a.mu.Lock()
	a.failedAt[key] = now
	a.mu.Unlock()
}

func retryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

// attemptKey names the object an attempt is about; see attempts.
func attemptKey(req *http.Request) string {
	q := req.URL.Query()
	if id := q.Get("upload_id"); id != "" {
		return "session " + id
	}
	if name := q.Get("name"); name != "" {
		return "insert " + name
	}
	return req.URL.Path
}

// attemptBody ends its attempt at the body's end, its first error or its
// close, whichever comes first: an error other than EOF fails it.
type attemptBody struct {
	io.ReadCloser
	a      *attempts
	key    string
	failed bool // the status already failed the attempt
	done   atomic.Bool
}

func (b *attemptBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && b.done.CompareAndSwap(false, true) {
		b.a.end(b.key, b.failed || !errors.Is(err, io.EOF))
	}
	return n, err
}

func (b *attemptBody) Close() error {
	if b.done.CompareAndSwap(false, true) {
		b.a.end(b.key, b.failed)
	}
	return b.ReadCloser.Close()
}
