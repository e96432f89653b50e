package main

import (
	"context"
	"os/exec"
	"sync"
)

// client is one way of moving the files, as the table names it.
type client struct {
	name string
	// in reports whether the client takes part in a scenario.
	in func(sc scenario) bool
	// available reports whether the client can run on this machine (the
	// CLIs need their binary on PATH).
	available func() bool
	// cli marks an installed command-line client, which runs only
	// options.CLIRounds rounds.
	cli bool
	// prepare builds the client in the child, before the clock starts.
	prepare func(ctx context.Context, spec *childSpec) (transfer, error)
}

// transfer moves the spec's files one way; the child times it.
type transfer interface {
	upload(ctx context.Context) (childResult, error)
	download(ctx context.Context) (childResult, error)
}

// Client names, in the order of the table.
const (
	clientGcsput         = "gcsput"
	clientGcsputUncapped = "gcsput-uncapped"
	clientOfficial       = "official"
	clientOfficialSingle = "official-single"
	clientHTTP           = "http"
	clientHTTPCRC        = "http-crc"
	clientGcloud         = "gcloud"
	clientRclone         = "rclone"
)

func clients() []client {
	always := func() bool { return true }
	everywhere := func(scenario) bool { return true }
	uncapped := func(sc scenario) bool { return !sc.capped }
	return []client{
		{clientGcsput, everywhere, always, false, prepareGcsput},
		// gcsput as in the capped scenario, on a server without the cap: the
		// most the machine lets it do, half of the capped target's reference.
		{clientGcsputUncapped, func(sc scenario) bool { return sc.capped }, always, false, prepareGcsput},
		{clientOfficial, everywhere, always, false, prepareOfficial},
		// ChunkSize 0 is the official client's single-request mode: its best
		// configuration for small files, but with no resumption and no retries
		// mid-object it is no way to send a large one.
		{clientOfficialSingle, func(sc scenario) bool { return sc.small }, always, false, prepareOfficial},
		// The loopback limit has no retries, so it sits out the faults; the
		// plain server has no cap.
		{clientHTTP, func(sc scenario) bool { return !sc.faults && !sc.capped }, always, false, preparePlain},
		// The same, checksumming the data as any verifying client must: the
		// file before its PUT (a pass of its own, since sendfile never shows
		// the bytes to the process), the body while it is read. Large file
		// only: the reference of the large upload's target.
		{clientHTTPCRC, func(sc scenario) bool { return !sc.faults && !sc.small && !sc.capped }, always, false, preparePlainCRC},
		{clientGcloud, everywhere, onPath("gcloud"), true, prepareGcloud},
		// rclone is not one of the capped scenario's clients (issue 14).
		{clientRclone, uncapped, onPath("rclone"), true, prepareRclone},
	}
}

func onPath(bin string) func() bool {
	return sync.OnceValue(func() bool {
		_, err := exec.LookPath(bin)
		return err == nil
	})
}

func clientByName(name string) (client, bool) {
	for _, c := range clients() {
		if c.name == name {
			return c, true
		}
	}
	return client{}, false
}

func clientNames() []string {
	var out []string
	for _, c := range clients() {
		out = append(out, c.name)
	}
	return out
}

// forEach calls fn for 0..n-1 on at most parallel goroutines; the first
// error cancels the rest and is returned.
func forEach(ctx context.Context, n, parallel int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	jobs := make(chan int)
	for w := 0; w < max(1, min(parallel, n)); w++ {
		wg.Go(func() {
			for i := range jobs {
				if err := fn(ctx, i); err != nil {
					once.Do(func() { firstErr = err; cancel() })
				}
			}
		})
	}
feed:
	for i := 0; i < n; i++ {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return firstErr
}
