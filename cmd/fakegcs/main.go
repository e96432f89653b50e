// Command fakegcs runs the fakegcs server (package
// github.com/gcsput/gcsput/fakegcs) as a program: a fake Google Cloud
// Storage JSON API on loopback that injects failures on command.
//
//	fakegcs [-addr 127.0.0.1:4443] [-backend memory|dir|discard] [-dir DIR]
//	        [-tls [-cert-out FILE]] [-bucket NAME]... [-faults SPEC|JSON|FILE]
//	        [-cap-rate BYTES] [-rtt DURATION] [-h2=false]
//	        [-write-rate N [-write-burst N]] [-read-rate N [-read-burst N]]
//	        [-limit-status 429|503] [-doubling DURATION] [-object-interval DURATION]
//	        [-link-rate BYTES]
//
// The first line on stdout is the server's URL. Faults can be added while
// it runs with POST /_fakegcs/faults, and GCS's request-rate limits
// changed with PUT /_fakegcs/limits. SIGINT or SIGTERM stops it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
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
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if err != flag.ErrHelp {
			fmt.Fprintln(stderr, "fakegcs:", err)
		}
		return 2
	}
	srv, err := fakegcs.New(cfg.opts)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer srv.Close()
	if cfg.cpuProfile != "" {
		stopProfile, err := startProfile(cfg.cpuProfile)
		if err != nil {
			fmt.Fprintln(stderr, "fakegcs:", err)
			return 1
		}
		defer stopProfile()
	}
	if cfg.certOut != "" && cfg.opts.TLS {
		if err := os.WriteFile(cfg.certOut, srv.CertPEM(), 0o644); err != nil {
			fmt.Fprintln(stderr, "fakegcs:", err)
			return 1
		}
	}
	fmt.Fprintln(stdout, srv.URL())
	fmt.Fprintf(stderr, "fakegcs: serving %s (backend %s, %s); JSON API endpoint %s\n", srv.URL(), orMemory(cfg.opts.Backend), wire(cfg.opts), srv.Endpoint())
	<-ctx.Done()
	fmt.Fprintln(stderr, "fakegcs: stopping")
	if err := srv.Close(); err != nil {
		fmt.Fprintln(stderr, "fakegcs:", err)
		return 1
	}
	return 0
}

type config struct {
	opts       fakegcs.Options
	certOut    string
	cpuProfile string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("fakegcs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfg     config
		buckets listFlag
		payers  listFlag
	)
	o := &cfg.opts
	fs.StringVar(&o.Addr, "addr", "127.0.0.1:0", "`address` to listen on (loopback, random port by default)")
	fs.StringVar(&o.Backend, "backend", "", "where object bytes go: memory (default), dir or discard")
	fs.StringVar(&o.Dir, "dir", "", "`directory` for object bytes; implies -backend dir")
	fs.BoolVar(&o.TLS, "tls", false, "serve HTTPS with a self-signed certificate (needed by gsutil)")
	fs.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write a CPU profile of the server to this `file` when it stops (to see where a benchmark's server time goes)")
	fs.StringVar(&cfg.certOut, "cert-out", "", "with -tls, write the certificate (PEM) to this `file`")
	h2 := fs.Bool("h2", true, "with -tls, offer HTTP/2 (ALPN h2) beside http/1.1, as GCS does; -h2=false offers http/1.1 only")
	fs.DurationVar(&o.RTT, "rtt", 0, "add this round-trip `time` to every connection, e.g. 20ms: what the server sends arrives that much later (a pipeline, so throughput is not divided by it); 0: none")
	fs.Var(&buckets, "bucket", "create this bucket at start (repeatable)")
	fs.Var(&payers, "requester-pays", "create this `bucket` at start with requester pays on: requests must name a project to bill (userProject) or get GCS's 400 (repeatable)")
	faults := fs.String("faults", "", "faults to inject: a spec such as 'status:op=storage.objects.insert,status=503,p=0.05;throttle:bps=40M,times=-1', JSON, or a file holding either (see fakegcs.ParseFaults)")
	capRate := fs.String("cap-rate", "0", "hold every connection to this many `bytes` per second each way, e.g. 50M (K, M, G: powers of 1024; 0: no cap), a model of GCS's per-connection rate on a real link; N connections get N times it")
	rewritePerCall := fs.String("rewrite-per-call", "0", "copy at most this many `bytes` per objects.rewrite call, e.g. 4M (a multiple of 1M), so that a rewrite of a larger object takes several calls and rewriteTokens, as GCS's across locations or storage classes do; 0: one call unless the client sends maxBytesRewrittenPerCall")
	l := &o.Limits
	fs.Float64Var(&l.WriteRate, "write-rate", 0, "a bucket's capacity for object writes, in requests per second (GCS: about 1000 at first); beyond it 429; 0: unlimited")
	fs.Float64Var(&l.WriteBurst, "write-burst", 0, "writes a bucket admits at once after an idle spell; 0: one second's worth")
	fs.Float64Var(&l.ReadRate, "read-rate", 0, "a bucket's capacity for object reads (gets, downloads, listings), in requests per second (GCS: about 5000); 0: unlimited")
	fs.Float64Var(&l.ReadBurst, "read-burst", 0, "reads a bucket admits at once; 0: one second's worth")
	fs.IntVar(&l.Status, "limit-status", 429, "what a request beyond a bucket's capacity gets: 429, or 503 as GCS sends while it scales a bucket up")
	fs.DurationVar(&l.Doubling, "doubling", 0, "grow a bucket's capacity while its load stays near it, doubling it over this much busy `time` (GCS: 20m); 0: fixed")
	fs.DurationVar(&l.ObjectInterval, "object-interval", 0, "shortest `time` between two writes to one object name (GCS: 1s); sooner gets 429; 0: no limit")
	linkRate := fs.String("link-rate", "0", "hold all connections together to this many `bytes` per second each way, e.g. 100M, the link's total beside -cap-rate's per connection; 0: none")
	fs.DurationVar(&o.DefaultSoftDelete, "soft-delete", 0, "keep deleted objects this long in the -bucket buckets and in buckets created without a softDeletePolicy, e.g. 168h (GCS's default for new buckets; 0: off, else 7 to 90 days)")
	fs.Uint64Var(&o.Seed, "seed", 0, "seed for probabilistic faults")
	fs.BoolVar(&o.DisableMD5, "no-md5", false, "do not compute md5Hash (faster; CRC32C is always computed)")
	fs.BoolVar(&o.LaxNames, "lax-names", false, "accept bucket and object names GCS refuses (\"..\", CR/LF, invalid UTF-8, bucket \"b\"); for tests that plant hostile names")
	fs.StringVar(&o.Token, "token", "", "require this bearer `token` on API requests (default: none, like an emulator); also $FAKEGCS_TOKEN")
	verbose := fs.Bool("v", false, "log injected faults and 5xx answers to stderr")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.HTTP1Only = !*h2
	if o.RTT < 0 {
		return cfg, fmt.Errorf("-rtt %v: want a duration such as 20ms, or 0", o.RTT)
	}
	if o.Dir != "" && o.Backend == "" {
		o.Backend = fakegcs.BackendDir
	}
	o.Buckets, o.RequesterPays = buckets, payers
	if o.Token == "" {
		o.Token = os.Getenv("FAKEGCS_TOKEN")
	}
	var err error
	if o.CapRate, err = fakegcs.ParseSize(*capRate); err != nil || o.CapRate < 0 {
		return cfg, fmt.Errorf("-cap-rate %q: want a byte count such as 50M, or 0", *capRate)
	}
	if l.LinkRate, err = fakegcs.ParseSize(*linkRate); err != nil || l.LinkRate < 0 {
		return cfg, fmt.Errorf("-link-rate %q: want a byte count such as 100M, or 0", *linkRate)
	}
	if err := l.Validate(); err != nil {
		return cfg, fmt.Errorf("limits: %w", err)
	}
	if o.RewriteBytesPerCall, err = fakegcs.ParseSize(*rewritePerCall); err != nil || o.RewriteBytesPerCall < 0 || o.RewriteBytesPerCall%(1<<20) != 0 {
		return cfg, fmt.Errorf("-rewrite-per-call %q: want a multiple of 1M such as 4M, or 0", *rewritePerCall)
	}
	if *faults != "" {
		fl, err := fakegcs.LoadFaults(*faults)
		if err != nil {
			return cfg, fmt.Errorf("-faults: %w", err)
		}
		o.Faults = fl
	}
	if *verbose {
		o.Logf = func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	}
	return cfg, nil
}

func orMemory(b string) string {
	if b == "" {
		return fakegcs.BackendMemory
	}
	return b
}

// wire describes the protocols offered, the RTT and the cap, for the log.
func wire(o fakegcs.Options) string {
	w := "HTTP/1.1"
	if o.TLS && !o.HTTP1Only {
		w = "h2 and HTTP/1.1 over TLS"
	} else if o.TLS {
		w = "HTTP/1.1 over TLS"
	}
	if o.RTT > 0 {
		w += fmt.Sprintf(", RTT %v", o.RTT)
	}
	if o.CapRate > 0 {
		w += fmt.Sprintf(", %d B/s per connection", o.CapRate)
	}
	if o.Limits.LinkRate > 0 {
		w += fmt.Sprintf(", %d B/s in all", o.Limits.LinkRate)
	}
	return w
}

// startProfile starts a CPU profile written to path; the returned function
// stops it and closes the file.
func startProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
