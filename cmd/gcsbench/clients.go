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
	clientGcsputH2       = "gcsput-h2"
	clientGcsputH2x1     = "gcsput-h2x1"
	clientGcsputH2x4     = "gcsput-h2x4"
	clientGcsputJ16      = "gcsput-j16"
	clientGcsputJ32      = "gcsput-j32"
	clientOfficial       = "official"
	clientOfficialH1     = "official-h1"
	clientOfficialSingle = "official-single"
	clientHTTP           = "http"
	clientHTTPCRC        = "http-crc"
	clientGcloud         = "gcloud"
	clientRclone         = "rclone"
)

func clients() []client {
	always := func() bool { return true }
	everywhere := func(sc scenario) bool { return !sc.tls }
	wire := func(sc scenario) bool { return sc.wire }
	plain := func(sc scenario) bool { return !sc.wire && !sc.tls }
	wideLarge := func(sc scenario) bool { return sc.wire && !sc.small && !sc.faults }
	return []client{
		{clientGcsput, func(scenario) bool { return true }, always, false, prepareGcsput},
		// gcsput as in the capped scenario, on a server without the cap: the
		// most the machine lets it do, half of the capped target's reference.
		{clientGcsputUncapped, func(sc scenario) bool { return sc.capped }, always, false, prepareGcsput},
		// On the wire, gcsput with HTTP/2 (--client-protocol http2): one
		// connection, as before issue 23, and pools that open another
		// connection once each carries 1 or 4 requests (--http2-streams).
		{clientGcsputH2, wire, always, false, prepareGcsput},
		{clientGcsputH2x1, wire, always, false, prepareGcsput},
		{clientGcsputH2x4, wire, always, false, prepareGcsput},
		// On the wire, the large file at -j 16 and -j 32: whether more
		// streams than the default pay (issue 31.3).
		{clientGcsputJ16, wideLarge, always, false, prepareGcsput},
		{clientGcsputJ32, wideLarge, always, false, prepareGcsput},
		{clientOfficial, everywhere, always, false, prepareOfficial},
		// On the wire, the official client with HTTP/1.1 forced.
		{clientOfficialH1, wire, always, false, prepareOfficial},
		// ChunkSize 0 is the official client's single-request mode: its best
		// configuration for small files, but with no resumption and no retries
		// mid-object it is no way to send a large one.
		{clientOfficialSingle, func(sc scenario) bool { return sc.small && plain(sc) }, always, false, prepareOfficial},
		// The loopback limit has no retries, so it sits out the faults; the
		// plain server has no cap.
		{clientHTTP, func(sc scenario) bool { return !sc.faults && !sc.capped && plain(sc) }, always, false, preparePlain},
		// The same, checksumming the data as any verifying client must: the
		// file before its PUT (a pass of its own, since sendfile never shows
		// the bytes to the process), the body while it is read. Large file
		// only: the reference of the large upload's target; over TLS, that
		// of the TLS CPU figure and of the wire's limit.
		{clientHTTPCRC, func(sc scenario) bool { return sc.tls || !sc.faults && !sc.small && !sc.capped && !sc.wire }, always, false, preparePlainCRC},
		{clientGcloud, everywhere, onPath("gcloud"), true, prepareGcloud},
		// rclone is not one of the capped scenario's clients (issue 14).
		{clientRclone, func(sc scenario) bool { return !sc.capped && !sc.tls }, onPath("rclone"), true, prepareRclone},
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
