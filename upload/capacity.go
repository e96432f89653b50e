package upload

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gcsput/gcsput/internal/aimd"
)

// A bucket's capacity. GCS admits about 1,000 object writes and 5,000 reads
// a second to a new bucket, and grows that gradually while the load stays
// near it; beyond it, it answers 429 (or 503 while it scales up). The
// seeds' backoff makes each refused request wait, but at a fixed
// concurrency the others keep meeting the limit. So a Client keeps one
// aimd.Window per bucket that decides how many requests are in flight to
// it: cut on a refusal, probed upward on success, as TCP does, with
// Options.Parallelism as the ceiling. A refused request gives its slot
// back and waits its own backoff; the rest go on at the reduced window.
//
// What takes a slot: every request on a bucket's objects, the reads and
// writes that capacity counts (JSON API object metadata, listings,
// composes, deletes, rewrites; single-request uploads and the start of
// each resumable session; downloads; XML paths), from the moment it is
// sent until its response's headers arrive: a download's body
// streams after its slot is back (GCS counts requests, not bytes). The
// chunks and status queries of a session already started take none: they
// are one object write, which its start already counted, paced by the
// transfer's own stream (Parallelism bounds those), and a chunk can take
// minutes, which would hold a slot from the bucket's other requests (and
// let a cut after one 503 narrow a large transfer's streams for gigabytes).
// Their answers still cut and widen the window (an answer widens it by
// the time its request was in flight). Requests on a bucket itself, not
// its objects (its metadata, as the composability check's GET of
// /storage/v1/b/B; its IAM policy, notifications, folders) take none and
// say nothing of its load: GCS's capacity is of object reads and writes
// (bucket metadata has a limit of its own, one update a second per
// bucket: cloud.google.com/storage/quotas), and a
// slot held by the check kept the last component's session a round trip
// from starting. Nor do requests that name no bucket (listing buckets,
// batch).

// capacityTransport holds every request to a bucket to the bucket's window.
type capacityTransport struct {
	base    http.RoundTripper
	host    string // the endpoint's host: requests to others take no slot
	prefix  string // the endpoint's path
	buckets *aimd.Buckets
	refused func() // told of every 429 or 503, after the window took it
}

func (c capacityTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	bucket := ""
	if r.URL.Host == c.host {
		bucket = objectsBucket(strings.TrimPrefix(r.URL.Path, c.prefix))
	}
	if bucket == "" {
		return c.base.RoundTrip(r)
	}
	w := c.buckets.For(bucket)
	if r.Method == http.MethodPut && r.URL.Query().Has("upload_id") {
		// A chunk or status query of a session already started: part of one
		// object write, paced by its own stream; its answer still counts.
		start := time.Now()
		resp, err := c.base.RoundTrip(r)
		w.Observe(outcomeOf(resp, err), time.Since(start))
		c.noteRefusal(resp, err)
		return resp, err
	}
	t, err := w.Acquire(r.Context())
	if err != nil {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, err
	}
	resp, err := c.base.RoundTrip(r)
	o := outcomeOf(resp, err)
	t.Release(o)
	c.noteRefusal(resp, err)
	return resp, err
}

// noteRefusal tells of a 429 or 503, after the window took it.
func (c capacityTransport) noteRefusal(resp *http.Response, err error) {
	if err == nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) && c.refused != nil {
		c.refused()
	}
}

// capacity returns the wrapper of c's transport that holds each bucket to
// its window.
func (c *Client) capacity() func(http.RoundTripper) http.RoundTripper {
	host := ""
	if u, err := url.Parse(c.endpoint); err == nil {
		host = u.Host
	}
	return func(base http.RoundTripper) http.RoundTripper {
		return capacityTransport{base: base, host: host, prefix: endpointPath(c.endpoint), buckets: c.windows, refused: c.meter.refused}
	}
}

// outcomeOf is what a response says of the bucket's load: a 503, or a 429
// but for one object's mutation rate, refuses; any other answer is an
// answer; no answer says nothing.
func outcomeOf(resp *http.Response, err error) aimd.Outcome {
	switch {
	case err != nil:
		return aimd.Neutral
	case resp.StatusCode == http.StatusServiceUnavailable:
		return aimd.Refused
	case resp.StatusCode == http.StatusTooManyRequests:
		if objectRateLimited(resp) {
			return aimd.ObjectRefused
		}
		return aimd.Refused
	}
	return aimd.Answered
}

// objectRateLimited reports whether a 429 is GCS's limit of about one write
// a second to one object name, not the bucket's load: "The object B/N
// exceeded the rate limit for object mutation operations (create, update,
// and delete)", formerly "The total number of changes to the object B/N
// exceeds the rate limit". Both carry the reason rateLimitExceeded, as the
// bucket's own 429 does, so only the message tells them apart. It reads the
// start of the body and puts it back for the caller.
func objectRateLimited(resp *http.Response) bool {
	if resp.Body == nil {
		return false
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, 8<<10))
	resp.Body = readCloser{Reader: io.MultiReader(bytes.NewReader(head), resp.Body), Closer: resp.Body}
	if err != nil {
		return false
	}
	msg := strings.ToLower(string(head))
	return strings.Contains(msg, "rate limit for object mutation") || strings.Contains(msg, "changes to the object")
}

type readCloser struct {
	io.Reader
	io.Closer
}

// objectsBucket is the bucket whose objects a request's path (without
// the endpoint's path) reads or writes: /storage/v1/b/B/o…,
// /upload/storage/v1/b/B/o…, /download/storage/v1/b/B/o…, or the XML
// API's /B/…; "" for one on no bucket's objects (/storage/v1/b/B and its
// other resources, /storage/v1/b?project=…, /batch/…).
func objectsBucket(p string) string {
	for _, api := range []string{"/storage/v1/b/", "/upload/storage/v1/b/", "/download/storage/v1/b/"} {
		if rest, ok := strings.CutPrefix(p, api); ok {
			b, res, _ := strings.Cut(rest, "/")
			if res != "o" && !strings.HasPrefix(res, "o/") {
				return ""
			}
			return b
		}
	}
	for _, other := range []string{"/storage/", "/upload/", "/download/", "/batch/"} {
		if strings.HasPrefix(p, other) {
			return ""
		}
	}
	b, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	return b
}
