// Command gcsbench measures gcsput against the official Go client, a plain
// net/http loopback transfer and the installed CLIs (gcloud, rclone), all
// talking to the same fakegcs on 127.0.0.1, in one run.
//
// Usage:
//
//	go run ./cmd/gcsbench            # the full run: 1 GiB, 2,000 × 16 KiB at 1/8/32, faults, capped; 3 rounds
//	go run ./cmd/gcsbench -quick     # 64 MiB and 200 files, one round: about a minute
//	go run ./cmd/gcsbench -scenarios capped      # 1 GiB through connections capped at 50 MB/s
//	go run ./cmd/gcsbench -scenarios manyfiles   # 1,000,000 files through the gcsput command
//	go run ./cmd/gcsbench -scenarios wire -quick # TLS offering h2, 20 ms, 50 MB/s per connection: 256 MiB, 2,000 files
//	go run ./cmd/gcsbench -scenarios capacity    # at GCS's limits: a bucket admitting 300 writes/s, a link's total
//
// # What is measured
//
// Every transfer of every client runs in its own child process (gcsbench
// re-executes itself with a hidden subcommand), so the peak RSS (the child's
// rusage Maxrss) and the CPU seconds (user + system) belong to that client
// alone. The servers — a fakegcs with the discard backend for uploads, a
// fakegcs that holds the data for downloads, and a bare net/http handler that
// discards PUT bodies and serves GETs from the source files — run in the
// parent, so their CPU is not charged to the client; it is shown apart as
// "srv CPU s".
//
// The plain net/http transfer of the same bytes is the loopback limit: no
// protocol, no retries, sendfile where Go can use it. "× loopback" divides a
// client's throughput by it. "http-crc" is the same transfer checksumming
// its bytes (the file before the PUT, the body of the GET), which any client
// that verifies what it moved must do: a large upload is judged against it
// (sendfile never shows the bytes to the process). "× official"
// divides by the best configuration of cloud.google.com/go/storage in the
// same scenario (the same chunk size as gcsput, and for small files also
// ChunkSize 0, its single-request mode).
//
// Before each timed download the parent touches and frees as much fresh
// memory as the download will write (see prefault): on a VM whose balloon
// hands freed pages back to the host, writing a 1 GiB file otherwise costs
// twice as much CPU in some rounds as in others, whatever the client.
//
// # Retries, faults and the cap
//
// The Go clients' retries are measured the same way for both, below their
// own retry loops (see attempts): an attempt on an object that follows a
// failed attempt on it is a retry, and the time between them is slept (the
// official client's backoff has no hook to count it). The CLIs' are not
// measured. "requests" are the API requests fakegcs served, counted the
// same way for every client.
//
// In the faults scenario every client meets the same faults, each once, at
// the same places (-fault-mode fixed, see fixedFaults); -fault-mode random
// fails each request with probability -fault-rate instead.
//
// In the capped scenario fakegcs holds every connection to -cap-rate each
// way (50 MB/s), a model of GCS's per-connection rate on a real link: a
// client goes faster only on more connections. gcsput runs with its
// defaults, the official client with one stream, gcloud with sliced
// downloads and parallel composite uploads configured like gcsput's (see
// gcloudParallel); gcsput-uncapped is gcsput the same way without the cap.
//
// # The wire
//
// The wire scenarios, which run only when named (-scenarios wire), put every
// client on the wire GCS has (issue 23): fakegcs over TLS offering h2 and
// http/1.1 by ALPN, -rtt away (20 ms), each TCP connection capped at
// -cap-rate. gcsput runs at its defaults (HTTP/1.1) and with HTTP/2 on one
// connection (gcsput-h2) or a pool of 1 or 4 streams per connection
// (gcsput-h2x1, gcsput-h2x4); the official client at its defaults (HTTP/2
// when offered) and with HTTP/1.1 forced (official-h1); gcloud with sliced
// downloads and parallel composite uploads; rclone if installed. Each moves
// -wire-size (1 GiB, 256 MiB with -quick) up and down, -wire-files small
// files (2,000) at each of -wire-parallel (8 and 32), and the large file
// under the fixed faults. The table shows the connections fakegcs counted
// per protocol and each row's limit: for the large file min(streams × cap,
// http-crc over TLS), for small files j / RTT. wire-tls is the TLS CPU
// figure: gcsput and http-crc over TLS, uncapped, no RTT, in MB per CPU
// second of the client.
//
// Each figure is the median over -rounds rounds; within a round the clients
// take turns, starting one later each round, so a slow moment of the machine
// is spread over all of them. MB/s are 10⁶ bytes per second; RSS is in MiB.
//
// # capacity
//
// The capacity scenario, which runs only when named, puts the clients at
// GCS's limits (issue 31; fakegcs.Limits): -capacity-files files of 16 KiB
// go into a bucket admitting -capacity-rate writes a second with one
// second's burst (429 beyond it), over TLS offering h2, at 5 ms and 20 ms,
// -cap-rate per connection: gcsput cp -r at its defaults and at -j 32,
// gcloud storage and the official client (gcsput's default streams); then gcsput into a
// bucket whose capacity doubles every -capacity-doubling while the load
// stays near it; then two gcsput processes at once, each with half the files. Each row
// shows files/s over the bucket's mean capacity during the run and fakegcs's
// refusals per 1,000 writes. A -capacity-size file goes up and down on a
// link of 60 ms and 20 MB/s per connection, with no total and with a total
// of -capacity-link. Issue 31's targets are judged on gcsput's rows.
// -capacity-large-only runs the large file alone; -capacity-growing-j
// default,8,16 the growing bucket alone, gcsput at each -j listed;
// -capacity-large-j default,5,8,16 the large file alone, both ways on both
// links, gcsput at each -j listed.
//
// # manyfiles
//
// The manyfiles scenario, which runs only when named, measures the gcsput
// command itself, as a user runs it: `gcsput cp -r -j 32 --json` of a tree of
// -many-files empty and one-byte files (1,000,000 by default) to a fakegcs
// that keeps no content, the time from starting it to its exit; the same on
// 2,000 such files, the reference of its files/s target; then four gcsput
// processes at once with --shard 0/4 … 3/4 on the same tree, whose union
// fakegcs's per-object insert counts must show to be every file exactly once.
// gcsput and the small program that starts each process and reports its
// peak RSS (internal/cmdusage) are built from this module with go build;
// -gcsput runs another gcsput instead.
//
// Generated data lives in a temporary directory that is removed at the end.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// childCommand is the hidden first argument that makes gcsbench run one
// measured transfer instead of the benchmark.
const childCommand = "__child"

// run is the whole program: the benchmark, or with childCommand one measured
// transfer whose spec comes on stdin and whose result goes to stdout as JSON.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == childCommand {
		return runChild(ctx, stdin, stdout, stderr)
	}
	opts, err := parseFlags(args, stderr)
	if err != nil {
		if err == errHelp {
			return 0
		}
		fmt.Fprintln(stderr, "gcsbench:", err)
		return 2
	}
	rep, err := benchmark(ctx, opts, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "gcsbench:", err)
		return 1
	}
	rep.write(stdout)
	return 0
}
