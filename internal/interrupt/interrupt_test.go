package interrupt

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// The first SIGTERM cancels with the cause and names the signal; the second calls second.
func TestContext(t *testing.T) {
	cause := errors.New("stopped")
	firsts := make(chan os.Signal, 1)
	quit := make(chan struct{})
	ctx, stop := Context(context.Background(), cause, func(s os.Signal) { firsts <- s }, func() { close(quit) })
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-firsts:
		if s != syscall.SIGTERM {
			t.Errorf("first got %v, want SIGTERM", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("SIGTERM did not reach first")
	}
	if !errors.Is(context.Cause(ctx), cause) {
		t.Fatalf("cause %v, want %v", context.Cause(ctx), cause)
	}
	select {
	case <-quit:
		t.Fatal("second called after one signal")
	default:
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-quit:
	case <-time.After(5 * time.Second):
		t.Fatal("second SIGTERM did not call second")
	}
}

// After stop, the context is cancelled without the cause and no callback runs.
func TestStop(t *testing.T) {
	ctx, stop := Context(context.Background(), errors.New("x"), func(os.Signal) { t.Error("first called") }, func() { t.Error("second called") })
	stop()
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), context.Canceled) {
		t.Errorf("cause %v, want context.Canceled", context.Cause(ctx))
	}
}
