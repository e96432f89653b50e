package resumable

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gcsput/gcsput/retry"
)

// Defaults for the zero values of Options.
const (
	DefaultEndpoint     = "https://storage.googleapis.com"
	DefaultChunkSize    = 16 << 20
	DefaultStallTimeout = 60 * time.Second
)

// Options configure a [Client]. The zero value is ready to use against GCS
// with http.DefaultClient (which carries no credentials: pass an
// authenticated client, e.g. from package auth).
type Options struct {
	// HTTPClient sends every request and carries the credentials.
	// nil means http.DefaultClient. Its Timeout, if any, bounds each
	// request, so leave it 0: the stall watchdog bounds idle time instead.
	HTTPClient *http.Client

	// Endpoint is the base URL of the JSON API, e.g. "http://127.0.0.1:4443"
	// for an emulator. A trailing "/storage/v1/" (the form
	// option.WithEndpoint takes) is accepted and removed. Empty means
	// DefaultEndpoint.
	Endpoint string

	// ChunkSize is the number of bytes sent per upload request. It must be
	// a multiple of 256 KiB (GCS's rule for non-final chunks); 0 means
	// DefaultChunkSize (16 MiB). Larger chunks mean fewer round trips; a
	// failed chunk is re-sent at most from the server's offset. Uploads from
	// an io.ReaderAt buffer nothing; stream uploads hold one chunk in memory.
	ChunkSize int

	// Retry runs every request (initiation, chunk, status query, final
	// request, cancel, download). nil means a zero retry.Runner: GCS's
	// truncated exponential backoff, 12 attempts and 10 minutes without
	// progress. For uploads and downloads the budget restarts whenever the
	// server's offset advances, so it bounds retries without progress, not
	// the transfer's length. The Runner is copied, never modified.
	Retry *retry.Runner

	// StallTimeout abandons an attempt during which no bytes moved for this
	// long; the upload then queries the server's offset and continues (a
	// download resumes with a Range request). Time spent reading the source
	// or writing the destination does not count. 0 means
	// DefaultStallTimeout (60 s); negative disables the watchdog.
	StallTimeout time.Duration

	// OnEvent, if set, receives an [Event] for each step, synchronously:
	// on the goroutine that runs the transfer, except EventSent, which
	// comes from the one writing the request body while the transfer waits.
	// One transfer's events are delivered one at a time, in order. Events
	// never contain the session URI's upload_id.
	OnEvent func(Event)

	// MD5 also computes the MD5 of uploads and sends it with the final chunk
	// (CRC32C is always computed). Downloads check MD5 whenever the server
	// sends one and MD5 is set.
	MD5 bool

	// UserProject, if set, is the project billed for every request (the
	// userProject parameter), which a requester-pays bucket requires.
	// Empty bills the bucket's owner.
	UserProject string

	// UserAgent is sent with every request; empty means "gcsput-resumable".
	UserAgent string

	// Clock is the time of the stall watchdog and of a session's Created;
	// nil means real time (retry.RealClock). Tests give a fake one
	// (retrytest.Clock) and move it to make a transfer stall. Retry waits
	// follow Retry.Clock.
	Clock retry.TimerClock
}

// Client uploads and downloads objects with GCS's resumable protocol. It is
// safe for concurrent use; each transfer is independent.
type Client struct {
	http      *http.Client
	endpoint  string
	chunkSize int
	stall     time.Duration
	clock     retry.TimerClock
	opts      Options
}

// New checks opts and returns a Client. A chunk size that is not a multiple
// of 256 KiB is an error.
func New(opts Options) (*Client, error) {
	c := &Client{http: opts.HTTPClient, opts: opts, chunkSize: opts.ChunkSize, stall: opts.StallTimeout, clock: opts.Clock}
	if c.clock == nil {
		c.clock = retry.RealClock
	}
	if c.http == nil {
		c.http = http.DefaultClient
	}
	if c.chunkSize == 0 {
		c.chunkSize = DefaultChunkSize
	}
	if err := checkChunkSize(c.chunkSize); err != nil {
		return nil, err
	}
	if c.stall == 0 {
		c.stall = DefaultStallTimeout
	}
	c.endpoint = strings.TrimSuffix(strings.TrimSuffix(opts.Endpoint, "/"), "/storage/v1")
	if c.endpoint == "" {
		c.endpoint = DefaultEndpoint
	}
	if c.opts.UserAgent == "" {
		c.opts.UserAgent = "gcsput-resumable"
	}
	c.http = OriginRedirects(c.http, c.endpoint)
	return c, nil
}

// ChunkSize returns the chunk size in effect.
func (c *Client) ChunkSize() int { return c.chunkSize }

// runner returns a copy of the configured retry runner whose OnRetry also
// reports EventRetry for obj. The caller's runner is never modified.
func (c *Client) runner(emit func(Event)) *retry.Runner {
	var r retry.Runner
	if c.opts.Retry != nil {
		r = *c.opts.Retry
	}
	user := r.OnRetry
	r.OnRetry = func(e retry.Event) {
		if user != nil {
			user(e)
		}
		emit(Event{Kind: EventRetry, Attempt: e.Attempt, Wait: e.Wait, Err: e.Err})
	}
	return &r
}

// emitter returns the event function for one transfer: it fills in the
// object's names, drops events when no callback is set, and delivers one
// event at a time (EventSent comes from the transport's goroutine).
func (c *Client) emitter(bucket, object string) func(Event) {
	if c.opts.OnEvent == nil {
		return func(Event) {}
	}
	var mu sync.Mutex
	return func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		e.Bucket, e.Object = bucket, object
		c.opts.OnEvent(e)
	}
}

// send runs one request under the stall watchdog. read consumes the response
// (under the same watchdog) and returns the step's error; the body is always
// closed. op names the step in a StallError.
func (c *Client) send(ctx context.Context, op string, req *http.Request, b *body, read func(*http.Response, *watchdog) error) error {
	actx, dog := startWatchdog(ctx, c.stall, c.clock)
	if b != nil {
		b.dog = dog
	}
	req.Header.Set("User-Agent", c.opts.UserAgent)
	c.billTo(req)
	if tok, ok := retry.IdempotencyToken(ctx); ok {
		req.Header.Set(retry.IdempotencyHeader, tok)
	}
	resp, err := c.http.Do(req.WithContext(actx))
	if err == nil {
		err = read(&http.Response{
			Status: resp.Status, StatusCode: resp.StatusCode, Header: resp.Header,
			Body: &watchedBody{resp.Body, dog}, ContentLength: resp.ContentLength,
			Request: resp.Request,
		}, dog)
		resp.Body.Close()
	}
	if b != nil {
		if _, _, srcErr := b.seal(); srcErr != nil {
			dog.stop(op, nil)
			return srcErr
		}
	}
	if err = dog.stop(op, err); err != nil && ctx.Err() != nil {
		return ctx.Err() // the caller gave up: no retry, no stall
	}
	return redactErr(err)
}

// watchedBody tells the watchdog about response bytes.
type watchedBody struct {
	io.ReadCloser
	dog *watchdog
}

func (w *watchedBody) Read(p []byte) (int, error) {
	n, err := w.ReadCloser.Read(p)
	if n > 0 {
		w.dog.moved()
	}
	return n, err
}

// maxJSONAnswer bounds the JSON answer of one request held in memory: one
// object's metadata (at most 8 KiB of custom metadata, and its ACL) is far
// smaller.
const maxJSONAnswer = 1 << 20

// readSome reads at most 1 MiB of a response body: enough for any JSON
// object or error GCS sends, and bounded against a misbehaving server.
func readSome(resp *http.Response) ([]byte, error) {
	return io.ReadAll(io.LimitReader(resp.Body, maxJSONAnswer))
}

// decodeJSON decodes a response body into v. A body cut short is a
// transport error (retryable: a status query will tell what happened);
// a complete body that is not JSON breaks the protocol.
// An answer longer than maxJSONAnswer is an error naming the bound, not a
// cut body read as broken JSON.
func decodeJSON(resp *http.Response, v any) error {
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxJSONAnswer+1))
	if err != nil {
		return err
	}
	if len(b) > maxJSONAnswer {
		return fmt.Errorf("%w: the %d response's JSON body is longer than %d MiB, the most read of one answer", errProtocol, resp.StatusCode, maxJSONAnswer>>20)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: decoding the %d response: %w", errProtocol, resp.StatusCode, err)
	}
	return nil
}
