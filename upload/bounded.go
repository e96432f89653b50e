package upload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Every listing ends, every answer is bounded. A server that answers a
// listing with a page token it gave before, or with page after page that
// holds no object, would keep a lister (ls -r, rm -r, du, sync, cp -r) busy
// forever; a metadata answer of 100 MB would be held whole in memory, and
// more (decoded). Both are errors after a bounded amount of no progress.

// MaxJSONAnswer is the most the Client reads of one JSON answer of the JSON
// API (an object's or a bucket's metadata, a page of a listing, a rewrite
// step): 32 MiB. A page of 1,000 objects, each with the 8 KiB of custom
// metadata GCS allows, is about 10 MiB. A longer answer fails with an error
// matching ErrAnswerTooLarge that names the bound. Object data (media) is
// never capped.
const MaxJSONAnswer = 32 << 20

// ErrAnswerTooLarge matches the error of a JSON answer longer than
// MaxJSONAnswer.
var ErrAnswerTooLarge = errors.New("the server's JSON answer is too large")

// ErrListNoProgress matches the error of a listing that makes no progress:
// the server gave a page token it had given before, or maxListRequests
// requests in a row brought no full page.
var ErrListNoProgress = errors.New("the listing makes no progress")

// listPageSize is the number of entries (objects and folders) a listing
// asks for per page, GCS's maximum.
const listPageSize = 1000

// maxListRequests bounds the requests the storage client's pager makes for
// one page of listPageSize entries: it asks again while a page is short, so
// an answer with an entry needs at most listPageSize requests, and more
// than this many means at least listPageSize answers in a row without one.
// (GCS may answer a matchGlob listing with an empty page and a token, but
// not a thousand in a row.)
const maxListRequests = 2 * listPageSize

// boundedJSON caps the JSON answers of the JSON API at MaxJSONAnswer and
// checks the page requests of a listing (pageGuard). prefix is the path of
// the endpoint ("" for a host's root).
type boundedJSON struct {
	base   http.RoundTripper
	prefix string
}

func (b boundedJSON) RoundTrip(r *http.Request) (*http.Response, error) {
	if g, ok := r.Context().Value(pageGuardKey{}).(*pageGuard); ok {
		if err := g.ask(r.URL.Query().Get("pageToken")); err != nil {
			if r.Body != nil {
				r.Body.Close()
			}
			return nil, err
		}
	}
	resp, err := b.base.RoundTrip(r)
	if err != nil || !b.jsonAnswer(r, resp) {
		return resp, err
	}
	resp.Body = &cappedBody{ReadCloser: resp.Body, left: MaxJSONAnswer, what: r.Method + " " + r.URL.Path}
	return resp, nil
}

// jsonAnswer reports whether resp is a JSON API answer: a request to the
// JSON API's paths that did not ask for the object's data (alt=media), and
// an answer that is JSON and carries no object (media answers carry
// X-Goog-Stored-Content-Length, whatever their content type).
func (b boundedJSON) jsonAnswer(r *http.Request, resp *http.Response) bool {
	p := strings.TrimPrefix(r.URL.Path, b.prefix)
	if !strings.HasPrefix(p, "/storage/v1/") && !strings.HasPrefix(p, "/upload/storage/v1/") {
		return false
	}
	return r.URL.Query().Get("alt") != "media" && resp.Header.Get("X-Goog-Stored-Content-Length") == "" &&
		strings.Contains(resp.Header.Get("Content-Type"), "json")
}

// endpointPath is the path of endpoint, without its trailing slash.
func endpointPath(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(u.Path, "/")
}

// cappedBody fails a read past left bytes.
type cappedBody struct {
	io.ReadCloser
	left int64
	what string // "GET /storage/v1/b/bkt/o/x", for the error (no query: it may hold a session's upload_id)
}

func (c *cappedBody) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, c.tooLarge()
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1] // one byte more tells a body of exactly the bound from a longer one
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n - 1, c.tooLarge()
	}
	return n, err
}

func (c *cappedBody) tooLarge() error {
	return fmt.Errorf("%w: the answer to %s is longer than %d MiB, the most gcsput reads of one JSON answer", ErrAnswerTooLarge, c.what, MaxJSONAnswer>>20)
}

// pageGuard watches the requests of one page of a listing, which the
// storage client's pager repeats until the page is full or the listing ends.
type pageGuard struct {
	mu       sync.Mutex
	asked    map[string]bool // page tokens requested ("" the first page)
	requests int
}

type pageGuardKey struct{}

// withPageGuard returns ctx for the requests of one page.
func withPageGuard(ctx context.Context) context.Context {
	return context.WithValue(ctx, pageGuardKey{}, &pageGuard{asked: map[string]bool{}})
}

// ask checks a page request with token: a token asked for before is one the
// server gave twice, and the requests for one page are bounded.
func (g *pageGuard) ask(token string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.requests++
	switch {
	case token != "" && g.asked[token]:
		return &listError{why: fmt.Sprintf("the server gave the same page token twice (after %d pages)", g.requests-1)}
	case g.requests > maxListRequests:
		return &listError{why: fmt.Sprintf("%d pages in a row brought fewer than %d objects", maxListRequests, listPageSize)}
	}
	g.asked[token] = true
	return nil
}

// listError is ErrListNoProgress with the reason.
type listError struct{ why string }

func (e *listError) Error() string {
	return ErrListNoProgress.Error() + ": " + e.why + "; gcsput stops a listing that makes no progress"
}

func (e *listError) Is(target error) bool { return target == ErrListNoProgress }
