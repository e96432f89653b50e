package upload

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gcsput/gcsput/internal/state"
)

// ErrInUse is matched (errors.Is) by the error of a transfer, or of
// CancelSession, whose saved transfer another live transfer holds (in this
// process or another): nothing of it was touched.
var ErrInUse = state.ErrBusy

// InUseError is the error (errors.As) of a saved transfer another live
// transfer holds: PID is the holder's process id as it recorded it (0 if
// unknown), for messages; nothing ever signals it.
type InUseError = state.BusyError

// ErrStopped is matched by the error of a transfer that stopped because
// another process cancelled it ([Client.ForceCancelSession], gcsput
// sessions cancel --force).
var ErrStopped = errors.New("stopped: another process cancelled this transfer (sessions cancel --force)")

// stopPoll is how often a live transfer looks for a request to stop.
const stopPoll = 200 * time.Millisecond

// claim is one transfer's hold on its key in the state directory (see
// state.Lock): taken before its record is read or first written, released
// after its last save. A nil claim (no state directory) holds nothing.
type claim struct {
	mu     sync.Mutex // take and release: a sliced download saves from its slices
	c      *Client
	key    string
	lock   *state.Lock
	ctx    context.Context // the transfer's, whose cause says it was stopped
	cancel context.CancelCauseFunc
}

// claimFor returns the claim of key, not yet taken, and the context of the
// transfer, which a request to stop cancels.
func (c *Client) claimFor(ctx context.Context, key string) (context.Context, *claim) {
	if c.store == nil {
		return ctx, nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	return ctx, &claim{c: c, key: key, ctx: ctx, cancel: cancel}
}

// busy is the error of a transfer whose key another holds.
func busy(src, dst string, err error) error {
	return fmt.Errorf("%s -> %s: %w: wait for it to end, or stop it ('gcsput sessions cancel --force')", src, dst, err)
}

// take takes the lock if not yet held; an error matching ErrInUse means
// another transfer holds it.
func (cl *claim) take() error {
	if cl == nil {
		return nil
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.lock != nil {
		return nil
	}
	l, err := cl.c.store.Lock(cl.key)
	if err != nil {
		return err
	}
	cl.lock = l
	cl.c.store.ClearStop(cl.key) // a request for an earlier holder
	cl.c.stops.add(cl)
	return nil
}

// release gives the lock up; the transfer's last save is done.
func (cl *claim) release() {
	if cl == nil {
		return
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.lock != nil {
		cl.c.stops.remove(cl)
		cl.lock.Release()
		cl.lock = nil
	}
	cl.cancel(nil)
}

// stopped turns the error of a transfer stopped on request into one that
// says so.
func (cl *claim) stopped(err error) error {
	if err != nil && cl != nil && errors.Is(context.Cause(cl.ctx), ErrStopped) {
		return fmt.Errorf("upload: %w", ErrStopped)
	}
	return err
}

// stopWatch looks, every stopPoll, for requests to stop the transfers that
// hold a lock. Its goroutine runs while at least one does.
type stopWatch struct {
	mu      sync.Mutex
	live    map[*claim]bool
	running bool
}

func (w *stopWatch) add(cl *claim) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.live == nil {
		w.live = map[*claim]bool{}
	}
	w.live[cl] = true
	if !w.running {
		w.running = true
		go w.loop()
	}
}

func (w *stopWatch) remove(cl *claim) {
	w.mu.Lock()
	delete(w.live, cl)
	w.mu.Unlock()
}

// loop ends once no transfer holds a lock.
func (w *stopWatch) loop() {
	t := time.NewTicker(stopPoll)
	defer t.Stop()
	for range t.C {
		w.mu.Lock()
		if len(w.live) == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		var live []*claim
		for cl := range w.live {
			live = append(live, cl)
		}
		w.mu.Unlock()
		for _, cl := range live {
			if cl.c.store.StopRequested(cl.key) {
				cl.cancel(ErrStopped)
			}
		}
	}
}
