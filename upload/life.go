package upload

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/gcsput/gcsput/retry"
)

// ErrClosed is matched (errors.Is) by the error of a method called on a
// Client after Close (or while Close runs).
var ErrClosed = errors.New("upload: client is closed")

// life is what Close ends: the calls in progress, which it cancels and
// waits for, and the gate that refuses new ones.
type life struct {
	mu     sync.Mutex
	closed bool
	calls  sync.WaitGroup
	ctx    context.Context // cancelled by Close, with cause ErrClosed
	cancel context.CancelCauseFunc
	once   sync.Once
	err    error       // Close's result, the same for every caller
	shut   atomic.Bool // every call has returned: requests are refused
}

func newLife() *life {
	l := &life{}
	l.ctx, l.cancel = context.WithCancelCause(context.Background())
	return l
}

// enteredKey marks a context already inside a call of the Client (a batch
// running its transfers), so the calls it makes are not counted again.
type enteredKey struct{ c *Client }

// enter starts a call of an exported method: ErrClosed after Close;
// otherwise a context that Close cancels, and done, which the call runs
// when it returns (Close waits for it).
func (c *Client) enter(ctx context.Context) (context.Context, func(), error) {
	if ctx.Value(enteredKey{c}) != nil {
		return ctx, func() {}, nil
	}
	l := c.life
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ctx, func() {}, ErrClosed
	}
	l.calls.Add(1)
	l.mu.Unlock()
	ctx, cancel := context.WithCancelCause(context.WithValue(ctx, enteredKey{c}, true))
	stop := context.AfterFunc(l.ctx, func() { cancel(ErrClosed) })
	return ctx, func() {
		stop()
		cancel(nil)
		l.calls.Done()
	}, nil
}

// Close stops the Client and releases what it holds. New calls of its
// methods fail with an error matching ErrClosed. Transfers in progress are
// cancelled as if their context ended: they end "interrupted" with their
// state saved (with a StateDir), so the same call on another Client, or
// Resume, continues them. Close waits for every call in progress to return,
// then closes the storage client and the idle keep-alive connections of the
// transport New made (a transport the caller gave, Options.HTTPClient or
// Auth.Base, is the caller's and is left open). Close may be called more
// than once and from several goroutines: one closes, the others wait for it
// and return the same result. Close must not be called from a callback
// (Progress, OnResult, OnEvent) of a call it would wait for.
func (c *Client) Close() error {
	l := c.life
	l.once.Do(func() {
		l.mu.Lock()
		l.closed = true
		l.mu.Unlock()
		l.cancel(ErrClosed)
		l.calls.Wait()
		l.shut.Store(true)
		c.flushSums()
		l.err = c.gcs.Close()
		if c.manifest != nil {
			l.err = errors.Join(l.err, c.manifest.Close())
		}
		if c.idle != nil {
			c.idle()
		}
	})
	return l.err
}

// closedGate refuses every request once its Client is closed: a method
// that did not enter (an iterator kept after Close) meets ErrClosed, not
// a connection pool being torn down.
type closedGate struct {
	base http.RoundTripper
	life *life
}

func (g closedGate) RoundTrip(r *http.Request) (*http.Response, error) {
	if g.life.shut.Load() {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, retry.Permanent(ErrClosed)
	}
	return g.base.RoundTrip(r)
}

// failedResult is the Result of a transfer that could not start.
func failedResult(src, dst string, err error) *Result {
	return &Result{Source: src, Dest: dst, Status: StatusFailed, Err: err}
}
