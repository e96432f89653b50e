package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// options configures one benchmark run. parseFlags fills it; the zero value
// is not used directly.
type options struct {
	// Size is the size in bytes of the large file (scenarios "large" and
	// "faults").
	Size int64
	// Files and FileSize describe the small-file scenarios.
	Files    int
	FileSize int64
	// Parallel lists the parallelisms of the small-file scenarios.
	Parallel []int
	// ChunkSize is the resumable chunk size given to gcsput, the official
	// client, gcloud and rclone alike.
	ChunkSize int64
	// Rounds is how many times each measurement is repeated; the table shows
	// the median.
	Rounds int
	// CLIRounds caps the rounds of the command-line clients: gcloud takes
	// seconds to start and moves small files at a few percent of the Go
	// clients' rate, so more rounds would add minutes and change nothing.
	CLIRounds int
	// FaultMode chooses the faults of the "faults" scenario: faultsFixed
	// (the same faults at the same places of the object for every client)
	// or faultsRandom (each request fails with probability FaultRate).
	FaultMode string
	// FaultRate is the probability with which fakegcs fails a request in the
	// "faults" scenario with FaultMode faultsRandom.
	FaultRate float64
	// CapRate is the "capped" scenario's rate in bytes per second of every
	// connection to fakegcs, each way.
	CapRate int64
	// RTT is the round-trip time fakegcs adds in the wire scenarios.
	RTT time.Duration
	// WireSize, WireFiles and WireParallel are the wire scenarios' large
	// file, number of small files and parallelisms (FileSize as elsewhere).
	WireSize     int64
	WireFiles    int
	WireParallel []int
	// Seed makes the data and the faults reproducible.
	Seed uint64
	// Clients restricts the clients; empty means every one that is available.
	Clients []string
	// Scenarios restricts the scenarios by name prefix ("large", "small",
	// "faults", "capped", "wire", "manyfiles"); empty means all but wire and
	// manyfiles, which run only when named (see options.selects).
	Scenarios []string
	// ManyFiles is the number of files in the manyfiles scenario's tree.
	ManyFiles int
	// Gcsput is the gcsput executable the manyfiles scenario runs; "" means
	// one built from this module for the run (see gcsputBinary).
	Gcsput string
	// TempDir is where the data and the downloads are written; "" is
	// /dev/shm when it has room, else os.TempDir() (see defaultTempDir).
	TempDir string
	// ProfileDir, when set, makes every Go child write a CPU profile there.
	ProfileDir string
	// CapacityFiles, CapacityRate (writes a second), CapacityDoubling,
	// CapacitySize and CapacityLink (bytes a second) are the capacity
	// scenario's small files, bucket, growth, large file and link total.
	CapacityFiles    int
	CapacityRate     float64
	CapacityDoubling time.Duration
	CapacitySize     int64
	CapacityLink     int64
	// CapacityLargeOnly runs only the capacity scenario's large file
	// (gcsput's rows; gcloud's when -clients names it), a minute instead of
	// several.
	CapacityLargeOnly bool
	// CapacityGrowingJ, when set, runs only the capacity scenario's growing
	// bucket, gcsput at each -j it lists (0: at its defaults, no -j), a few
	// runs of seconds instead of minutes.
	CapacityGrowingJ []int
	// CapacityLargeJ, when set, runs only the capacity scenario's large
	// file, gcsput at each -j it lists (0: at its defaults), both ways on
	// both links: how many streams pay.
	CapacityLargeJ []int
	// SyncFiles and SyncFileSize are the sync scenario's small files;
	// SyncLarge and SyncLargeSize its large ones; SyncChange the per cent of
	// the small files rewritten before its third step.
	SyncFiles     int
	SyncFileSize  int64
	SyncLarge     int
	SyncLargeSize int64
	SyncChange    float64
}

var errHelp = errors.New("help requested")

// Fault modes of the faults scenario (-fault-mode).
const (
	faultsFixed  = "fixed"
	faultsRandom = "random"
)

// quickOptions are the sizes of -quick: every scenario and client still
// runs, on data small enough for a test. The wire scenarios keep their 2,000
// small files: at j / RTT fewer would be over in a fraction of a second.
func quickOptions(o *options) {
	o.Size = 64 << 20
	o.WireSize = 256 << 20
	o.Files = 200
	o.Rounds = 1
	o.ManyFiles = 20000
}

// applyQuick gives o -quick's sizes, except those whose flags were set
// (named in set): flags given explicitly win.
func applyQuick(o *options, set map[string]bool) {
	q := *o
	quickOptions(&q)
	if !set["size"] {
		o.Size = q.Size
	}
	if !set["files"] {
		o.Files = q.Files
	}
	if !set["wire-size"] {
		o.WireSize = q.WireSize
	}
	if !set["rounds"] {
		o.Rounds = q.Rounds
	}
	if !set["many-files"] {
		o.ManyFiles = q.ManyFiles
	}
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	o := options{}
	fs := flag.NewFlagSet("gcsbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	size := fs.String("size", "1GiB", "size of the large file (`bytes`, suffixes KiB, MiB, GiB)")
	fileSize := fs.String("file-size", "16KiB", "size of each small file")
	chunk := fs.String("chunk", "16MiB", "resumable chunk size for every client")
	parallel := fs.String("parallel", "1,8,32", "parallelisms of the small-file scenarios")
	clients := fs.String("clients", "", "comma-separated clients (default: all available): "+strings.Join(clientNames(), ","))
	scenarios := fs.String("scenarios", "", "comma-separated scenario prefixes: large,small,faults,capped,wire,manyfiles,capacity,sync (default: all but wire, manyfiles, capacity and sync, which run only when named)")
	capRate := fs.String("cap-rate", "50MB", "the capped and wire scenarios' rate per connection, each way (`bytes/s`; MB = 10⁶ bytes, MiB = 2²⁰)")
	quick := fs.Bool("quick", false, "small sizes (64 MiB, 200 files, 256 MiB on the wire, 20,000 manyfiles, 1 round) for a run well under a minute (the wire scenarios take minutes)")
	wireSize := fs.String("wire-size", "1GiB", "size of the wire scenarios' large file")
	wireParallel := fs.String("wire-parallel", "8,32", "parallelisms of the wire scenarios' small files")
	fs.DurationVar(&o.RTT, "rtt", 20*time.Millisecond, "round-trip time fakegcs adds in the wire scenarios")
	fs.IntVar(&o.WireFiles, "wire-files", 2000, "number of small files in the wire scenarios")
	fs.IntVar(&o.Files, "files", 2000, "number of small files")
	fs.IntVar(&o.ManyFiles, "many-files", 1000000, "number of files in the manyfiles scenario's tree")
	fs.StringVar(&o.Gcsput, "gcsput", "", "gcsput `binary` for the manyfiles scenario (default: built from this module with go build)")
	fs.IntVar(&o.Rounds, "rounds", 3, "rounds per measurement; the median is shown")
	fs.IntVar(&o.CLIRounds, "cli-rounds", 1, "at most this many rounds for gcloud and rclone")
	fs.StringVar(&o.FaultMode, "fault-mode", faultsFixed, "faults scenario: fixed (the same faults at the same places for every client) or random (each request fails with probability -fault-rate)")
	fs.Float64Var(&o.FaultRate, "fault-rate", 0.05, "with -fault-mode random, the probability of an injected fault per request")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the generated data and of the faults")
	fs.StringVar(&o.TempDir, "tmpdir", "", "directory for generated data and downloads (default: /dev/shm if it has room, else the system's)")
	fs.IntVar(&o.CapacityFiles, "capacity-files", 2000, "number of 16 KiB files in the capacity scenario")
	fs.Float64Var(&o.CapacityRate, "capacity-rate", 300, "the capacity scenario's bucket: object writes admitted per second (one second's burst)")
	fs.DurationVar(&o.CapacityDoubling, "capacity-doubling", 5*time.Second, "the capacity scenario's growing bucket doubles its capacity over this much busy time (GCS: 20m)")
	capacitySize := fs.String("capacity-size", "256MiB", "size of the capacity scenario's large file")
	fs.BoolVar(&o.CapacityLargeOnly, "capacity-large-only", false, "the capacity scenario's large file only: gcsput's rows (and gcloud's if -clients names it)")
	capacityGrowingJ := fs.String("capacity-growing-j", "", "the capacity scenario's growing bucket only: gcsput at each `-j` of this comma-separated list (\"default\": at its defaults, no -j), e.g. default,8,16")
	capacityLargeJ := fs.String("capacity-large-j", "", "the capacity scenario's large file only: gcsput at each `-j` of this comma-separated list (\"default\": no -j), e.g. default,5,8,16")
	capacityLink := fs.String("capacity-link", "100MB", "the capacity scenario's link total for the large file (`bytes/s`), beside 20 MB/s per connection")
	fs.StringVar(&o.ProfileDir, "cpuprofile-dir", "", "write a CPU profile of every Go child into this `dir`")
	fs.IntVar(&o.SyncFiles, "sync-files", 1000000, "number of small files in the sync scenario's tree")
	syncFileSize := fs.String("sync-file-size", "4KiB", "size of each small file of the sync scenario")
	fs.IntVar(&o.SyncLarge, "sync-large", 4, "number of large files in the sync scenario's tree")
	syncLargeSize := fs.String("sync-large-size", "256MiB", "size of each large file of the sync scenario")
	fs.Float64Var(&o.SyncChange, "sync-change", 1, "per cent of the sync scenario's small files rewritten before its last step")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, errHelp
		}
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if o.Size, err = parseSize(*size); err != nil {
		return o, fmt.Errorf("-size: %w", err)
	}
	if o.FileSize, err = parseSize(*fileSize); err != nil {
		return o, fmt.Errorf("-file-size: %w", err)
	}
	if o.ChunkSize, err = parseSize(*chunk); err != nil {
		return o, fmt.Errorf("-chunk: %w", err)
	}
	if o.CapRate, err = parseRate(*capRate); err != nil {
		return o, fmt.Errorf("-cap-rate: %w", err)
	}
	if o.Parallel, err = parseInts(*parallel); err != nil {
		return o, fmt.Errorf("-parallel: %w", err)
	}
	if o.WireSize, err = parseSize(*wireSize); err != nil {
		return o, fmt.Errorf("-wire-size: %w", err)
	}
	if o.CapacitySize, err = parseSize(*capacitySize); err != nil {
		return o, fmt.Errorf("-capacity-size: %w", err)
	}
	if o.CapacityLink, err = parseRate(*capacityLink); err != nil {
		return o, fmt.Errorf("-capacity-link: %w", err)
	}
	if *capacityGrowingJ != "" {
		if o.CapacityGrowingJ, err = parseJobs(*capacityGrowingJ); err != nil {
			return o, fmt.Errorf("-capacity-growing-j: %w", err)
		}
	}
	if *capacityLargeJ != "" {
		if o.CapacityLargeJ, err = parseJobs(*capacityLargeJ); err != nil {
			return o, fmt.Errorf("-capacity-large-j: %w", err)
		}
	}
	if o.WireParallel, err = parseInts(*wireParallel); err != nil {
		return o, fmt.Errorf("-wire-parallel: %w", err)
	}
	if o.SyncFileSize, err = parseSize(*syncFileSize); err != nil {
		return o, fmt.Errorf("-sync-file-size: %w", err)
	}
	if o.SyncLargeSize, err = parseSize(*syncLargeSize); err != nil {
		return o, fmt.Errorf("-sync-large-size: %w", err)
	}
	if *quick {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		applyQuick(&o, set)
	}
	o.Clients = splitList(*clients)
	o.Scenarios = splitList(*scenarios)
	return o, o.validate()
}

func (o options) validate() error {
	switch {
	case o.Size <= 0 || o.FileSize <= 0 || o.Files <= 0 || o.ManyFiles <= 0 || o.WireSize <= 0 || o.WireFiles <= 0:
		return errors.New("sizes and counts must be positive")
	case o.ChunkSize <= 0 || o.ChunkSize%(256<<10) != 0:
		return fmt.Errorf("-chunk %d is not a positive multiple of 256 KiB", o.ChunkSize)
	case o.Rounds < 1 || o.CLIRounds < 1:
		return errors.New("-rounds and -cli-rounds must be at least 1")
	case o.FaultRate < 0 || o.FaultRate >= 1:
		return errors.New("-fault-rate must be in [0, 1)")
	case o.FaultMode != faultsFixed && o.FaultMode != faultsRandom:
		return fmt.Errorf("-fault-mode %q is neither %s nor %s", o.FaultMode, faultsFixed, faultsRandom)
	case o.CapRate <= 0:
		return errors.New("-cap-rate must be positive")
	case o.CapacityFiles <= 0 || o.CapacityRate <= 0 || o.CapacityDoubling <= 0 || o.CapacitySize <= 0 || o.CapacityLink <= 0:
		return errors.New("-capacity-files, -capacity-rate, -capacity-doubling, -capacity-size and -capacity-link must be positive")
	case o.RTT < 0:
		return errors.New("-rtt must not be negative")
	case o.SyncFiles < 100 || o.SyncFileSize <= 0 || o.SyncLarge < 0 || o.SyncLargeSize < 0:
		return errors.New("-sync-files must be at least 100 (1 % of them change), -sync-file-size positive, -sync-large and -sync-large-size not negative")
	case o.SyncChange <= 0 || o.SyncChange > 100:
		return errors.New("-sync-change must be a per cent in (0, 100]")
	}
	for _, c := range o.Clients {
		if _, ok := clientByName(c); !ok {
			return fmt.Errorf("unknown client %q (known: %s)", c, strings.Join(clientNames(), ", "))
		}
	}
	return nil
}

// selects reports whether the run includes the scenario called name: one
// whose name starts with a -scenarios prefix, or with none given, any but
// manyfiles, whose million files in a tmpfs and few minutes are asked for by
// name, and the wire and capacity scenarios, which take minutes too.
func (o options) selects(name string) bool {
	if len(o.Scenarios) == 0 {
		return name != scenarioManyFiles && name != scenarioCapacity && name != scenarioSync && !strings.HasPrefix(name, wirePrefix)
	}
	return slices.ContainsFunc(o.Scenarios, func(p string) bool { return strings.HasPrefix(name, p) })
}

// wantsClient reports whether -clients names the client called name, or is
// empty.
func (o options) wantsClient(name string) bool {
	return len(o.Clients) == 0 || slices.Contains(o.Clients, name)
}

// parseSize reads "1GiB", "64MiB", "16KiB", "4096" (binary units only, so a
// size is never ambiguous).
func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	num, mult := s, int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}

// parseRate reads a rate in bytes per second: a size as parseSize reads it,
// or with a decimal unit ("50MB" is 50,000,000, as MB/s in the table), with
// or without "/s".
func parseRate(s string) (int64, error) {
	v := strings.TrimSuffix(strings.TrimSpace(s), "/s")
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}, {"KB", 1e3}} {
		if num, ok := strings.CutSuffix(v, u.suffix); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
			if err != nil || n < 0 {
				return 0, fmt.Errorf("bad rate %q", s)
			}
			return n * u.mult, nil
		}
	}
	n, err := parseSize(v)
	if err != nil {
		return 0, fmt.Errorf("bad rate %q", s)
	}
	return n, nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad number %q", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("empty list")
	}
	return out, nil
}

// parseJobs parses a list of -j values, "default" standing for gcsput's
// (as 0).
func parseJobs(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		switch {
		case f == "default":
			n = 0
		case err != nil || n < 1:
			return nil, fmt.Errorf("bad -j %q (a number, or default)", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("empty list")
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
