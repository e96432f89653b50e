package upload

import (
	"context"
	"sync"
)

// streams is a Client's budget of data streams: Options.Parallelism
// requests that move an object's bytes at once. A whole-file transfer holds
// one from its start to its end. A sliced download or a composite upload
// runs its first part on the stream its transfer holds and each further
// part on one more, taken only while one is free: -j 8 never has more than
// 8 data requests in flight, and a tree of small files never waits for a
// large file's parts.
type streams chan struct{}

// take waits for a free stream; put gives it back.
func (s streams) take(ctx context.Context) error {
	select {
	case s <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s streams) put() { <-s }

// hold runs f on a stream of the budget (a whole-file transfer).
func (c *Client) hold(ctx context.Context, f func() error) error {
	if err := c.billingStop(); err != nil {
		return err
	}
	if err := c.streams.take(ctx); err != nil {
		return err
	}
	defer c.streams.put()
	if err := c.billingStop(); err != nil {
		return err
	}
	return c.noteBilling(f())
}

// partRun runs the parts of one transfer: next hands out the parts not yet
// started. Up to most-1 helpers run them, each on a stream taken from the
// budget while one is free, from startParts on; the caller joins them on the
// stream its transfer holds (join) once it is free, and they all leave when
// nothing is left to start. run's first error ends the parts: it is what
// join returns, and the others' ctx is cancelled.
type partRun struct {
	ctx    context.Context
	cancel context.CancelFunc
	next   func() (int, bool)
	run    func(ctx context.Context, i int) error
	mu     sync.Mutex // guards next, first and exhausted
	first  error
	// exhausted: next has handed out every part (so with no error, every
	// part ran to success, whatever ctx says now)
	exhausted bool
	drained   chan struct{}
	wg        sync.WaitGroup
}

func (c *Client) startParts(ctx context.Context, most int, next func() (int, bool), run func(ctx context.Context, i int) error) *partRun {
	p := &partRun{next: next, run: run, drained: make(chan struct{})}
	p.ctx, p.cancel = context.WithCancel(ctx)
	for range most - 1 {
		p.wg.Go(func() {
			select {
			case c.streams <- struct{}{}:
				defer c.streams.put()
				p.work()
			case <-p.drained:
			case <-p.ctx.Done():
			}
		})
	}
	return p
}

// work runs parts until none is left to start or the run is cancelled.
func (p *partRun) work() {
	for p.ctx.Err() == nil {
		p.mu.Lock()
		i, ok := p.next()
		p.exhausted = p.exhausted || !ok
		p.mu.Unlock()
		if !ok {
			return
		}
		if err := p.run(p.ctx, i); err != nil {
			p.fail(err)
		}
	}
}

// fail records err (the first is kept) and cancels the other parts.
func (p *partRun) fail(err error) {
	p.mu.Lock()
	if p.first == nil {
		p.first = err
	}
	p.mu.Unlock()
	p.cancel()
}

// join runs parts on the caller's stream until none is left, waits for the
// helpers and returns the first error (ctx's when it ended the run before
// every part was handed out; parts that all succeeded are a success, even
// if ctx ended after).
func (p *partRun) join() error {
	p.work()
	close(p.drained) // nothing left to start: helpers still waiting for a stream leave
	p.wg.Wait()
	defer p.cancel()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.exhausted { // ctx ended the loops: was anything left to start?
		_, left := p.next()
		p.exhausted = !left
	}
	if p.first == nil && !p.exhausted {
		return context.Cause(p.ctx) // cancelled before every part was handed out
	}
	return p.first
}
