// Command fakegcs runs the fakegcs server (package
// github.com/gcsput/gcsput/fakegcs) as a program: a fake Google Cloud
// Storage JSON API on loopback that injects failures on command.
//
//	fakegcs [-addr 127.0.0.1:4443] [-backend memory|dir|discard] [-dir DIR]
//	        [-tls [-cert-out FILE]] [-bucket NAME]... [-faults SPEC|JSON|FILE]
//
// The first line on stdout is the server's URL. Faults can be added while
// it runs with POST /_fakegcs/faults. SIGINT or SIGTERM stops it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/gcsput/gcsput/fakegcs"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// run starts the server, prints its URL and serves until ctx ends. Exit
// codes: 0 after a clean stop, 1 when the server cannot start, 2 for bad
// flags.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fakegcs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		opts    fakegcs.Options
		buckets listFlag
	)
	fs.StringVar(&opts.Addr, "addr", "127.0.0.1:0", "`address` to listen on (loopback, random port by default)")
	fs.StringVar(&opts.Backend, "backend", "", "where object bytes go: memory (default), dir or discard")
	fs.StringVar(&opts.Dir, "dir", "", "`directory` for object bytes; implies -backend dir")
	fs.BoolVar(&opts.TLS, "tls", false, "serve HTTPS with a self-signed certificate (needed by gsutil)")
	certOut := fs.String("cert-out", "", "with -tls, write the certificate (PEM) to this `file`")
	fs.Var(&buckets, "bucket", "create this bucket at start (repeatable)")
	faults := fs.String("faults", "", "faults to inject: a spec (kind:key=value,...;...), JSON, or a file holding either")
	fs.Uint64Var(&opts.Seed, "seed", 0, "seed for probabilistic faults")
	fs.BoolVar(&opts.DisableMD5, "no-md5", false, "do not compute md5Hash (faster; CRC32C is always computed)")
	verbose := fs.Bool("v", false, "log injected faults and 5xx answers to stderr")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fakegcs: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if opts.Dir != "" && opts.Backend == "" {
		opts.Backend = fakegcs.BackendDir
	}
	opts.Buckets = buckets
	if *faults != "" {
		fl, err := fakegcs.LoadFaults(*faults)
		if err != nil {
			fmt.Fprintln(stderr, "fakegcs: -faults:", err)
			return 2
		}
		opts.Faults = fl
	}
	if *verbose {
		opts.Logf = func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	}
	srv, err := fakegcs.New(opts)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer srv.Close()
	if *certOut != "" && opts.TLS {
		if err := os.WriteFile(*certOut, srv.CertPEM(), 0o644); err != nil {
			fmt.Fprintln(stderr, "fakegcs:", err)
			return 1
		}
	}
	fmt.Fprintln(stdout, srv.URL())
	fmt.Fprintf(stderr, "fakegcs: serving %s (backend %s); JSON API endpoint %s\n", srv.URL(), orMemory(opts.Backend), srv.Endpoint())
	<-ctx.Done()
	fmt.Fprintln(stderr, "fakegcs: stopping")
	if err := srv.Close(); err != nil {
		fmt.Fprintln(stderr, "fakegcs:", err)
		return 1
	}
	return 0
}

func orMemory(b string) string {
	if b == "" {
		return fakegcs.BackendMemory
	}
	return b
}
