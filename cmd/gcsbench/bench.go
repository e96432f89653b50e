package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// scenario is one row group of the table.
type scenario struct {
	name     string
	files    []fileRef
	parallel int
	small    bool // many small files
	faults   bool // fakegcs injects faults (see options.FaultMode)
	// capped: fakegcs holds every connection to options.CapRate, and each
	// client runs with its own defaults (parallel is 0).
	capped bool
	// wire: every client talks TLS to a fakegcs that offers h2 and
	// http/1.1, options.RTT away, each connection held to options.CapRate
	// (see wire.go); tls: TLS without RTT or cap, for the TLS CPU figure.
	wire, tls bool
}

// bytes is the scenario's total data size.
func (sc scenario) bytes() int64 {
	var n int64
	for _, f := range sc.files {
		n += f.Size
	}
	return n
}

// Scenario names. The small-file scenarios are "small-p<parallelism>".
const (
	scenarioLarge  = "large"
	scenarioFaults = "faults"
	scenarioCapped = "capped"
)

func scenarios(o options, d *dataset) []scenario {
	all := []scenario{{name: scenarioLarge, files: []fileRef{d.Large}, parallel: 1}}
	for _, p := range o.Parallel {
		all = append(all, scenario{name: fmt.Sprintf("small-p%d", p), files: d.Small, parallel: p, small: true})
	}
	all = append(all, scenario{name: scenarioFaults, files: []fileRef{d.Large}, parallel: 1, faults: true},
		scenario{name: scenarioCapped, files: []fileRef{d.Large}, capped: true})
	all = append(all, wireScenarios(o, d)...)
	return slices.DeleteFunc(all, func(sc scenario) bool { return !o.selects(sc.name) })
}

// anyTransferScenario reports whether the run includes one of the scenarios
// that scenarios returns, which need the generated data and the servers.
func anyTransferScenario(o options) bool {
	if o.selects(scenarioLarge) || o.selects(scenarioFaults) || o.selects(scenarioCapped) || anyPlainSmall(o) {
		return true
	}
	return anyWire(o)
}

// anyPlainSmall reports whether the run includes a plaintext small-file
// scenario.
func anyPlainSmall(o options) bool {
	return slices.ContainsFunc(o.Parallel, func(p int) bool { return o.selects(fmt.Sprintf("small-p%d", p)) })
}

// env is everything a benchmark run shares: data, servers, the executable.
type env struct {
	o     options
	self  string
	log   io.Writer
	data  *dataset
	work  string // downloads and CLI configuration
	plain *plainServer
	fakes *fakes
	// plainTLS is the plain server over TLS (HTTP/1.1), and caFiles the
	// certificate file of each TLS server by URL; both for the wire
	// scenarios only.
	plainTLS *plainServer
	caFiles  map[string]string
}

// benchmark runs the selected scenarios: the clients' transfers, then
// manyfiles. A failed transfer is in the report; an error stops the run.
func benchmark(ctx context.Context, o options, log io.Writer) (*report, error) {
	// The child is this very executable; under `go test` it is the test
	// binary, whose TestMain runs childCommand.
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	tmp := o.TempDir
	if tmp == "" {
		tmp = defaultTempDir(o.tempNeed())
	}
	root, err := os.MkdirTemp(tmp, "gcsbench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	start := time.Now()
	rep := newReport(o, nil, nil)
	if anyTransferScenario(o) {
		if err := runTransfers(ctx, rep, self, root, log); err != nil {
			return rep, err
		}
	}
	if o.selects(scenarioManyFiles) {
		m := &manyEnv{o: o, dir: filepath.Join(root, "many"), log: log}
		rep.many = &manyReport{files: o.ManyFiles}
		if err := m.run(ctx, rep.many); err != nil {
			return rep, err
		}
	}
	if o.selects(scenarioCapacity) {
		c := &capacityEnv{o: o, dir: filepath.Join(root, "capacity"), log: log}
		rep.capacity = &capacityReport{o: o}
		if err := c.run(ctx, rep.capacity); err != nil {
			return rep, err
		}
	}
	if o.selects(scenarioSync) {
		rep.sync = &syncReport{o: o}
		if err := syncBenchmark(ctx, o, rep.sync, log); err != nil {
			return rep, err
		}
	}
	fmt.Fprintf(log, "done in %.0fs\n", time.Since(start).Seconds())
	return rep, nil
}

// tempNeed is the room a run needs in its temporary directory.
type tempNeed struct {
	bytes  int64
	inodes int64 // files and directories
}

// tempNeed is how much room the selected scenarios need in the temporary
// directory: the sources, one download at a time, a margin; for manyfiles,
// a page for each non-empty file (tmpfs gives every file its own) and its
// reference tree.
func (o options) tempNeed() tempNeed {
	n := tempNeed{bytes: 256 << 20, inodes: 1 << 10}
	if anyTransferScenario(o) {
		n.bytes += 2*o.Size + 2*int64(o.Files)*o.FileSize
		n.inodes += int64(o.Files)
	}
	if anyWire(o) {
		n.bytes += 2*o.WireSize + 2*int64(o.WireFiles)*o.FileSize
		n.inodes += int64(o.WireFiles)
	}
	if o.selects(scenarioCapacity) {
		n.bytes += 3*int64(o.CapacityFiles)*capacityFileSize + 2*o.CapacitySize
		n.inodes += 2 * int64(o.CapacityFiles)
	}
	if o.selects(scenarioManyFiles) {
		files := int64(o.ManyFiles + manyRefFiles)
		n.bytes += files / 2 * 4096
		n.inodes += files + files/manyPerDir
	}
	return n
}

// capRate is the rate of the capped servers, or 0 when the run has no
// capped scenario and needs none.
func capRate(o options) int64 {
	if !o.selects(scenarioCapped) {
		return 0
	}
	return o.CapRate
}

// runTransfers measures every client in the scenarios that scenarios
// selects, on data generated under root, and fills rep.
func runTransfers(ctx context.Context, rep *report, self, root string, log io.Writer) error {
	o := rep.o
	e := &env{o: o, self: self, log: log, work: filepath.Join(root, "work")}
	start := time.Now()
	fmt.Fprintf(log, "generating %d MiB + %d × %d B in %s\n", o.Size>>20, o.Files, o.FileSize, root)
	var err error
	if e.data, err = generate(filepath.Join(root, "data"), o); err != nil {
		return err
	}
	e.plain = startPlain(e.data.Dir, false)
	defer e.plain.close()
	if e.fakes, err = startFakes(ctx, e.data, o, capRate(o)); err != nil {
		return err
	}
	defer e.fakes.close()
	err = e.startWire()
	defer e.plainTLS.close()
	if err != nil {
		return err
	}
	rep.scenarios, rep.clients = scenarios(o, e.data), selectClients(o)
	fmt.Fprintf(log, "clients: %s; setup %.1fs\n", strings.Join(rep.clientNames(), ", "), time.Since(start).Seconds())
	for _, sc := range rep.scenarios {
		if err := e.runScenario(ctx, rep, sc); err != nil {
			return err
		}
	}
	return nil
}

// selectClients returns the requested clients that can run here.
func selectClients(o options) []client {
	var out []client
	for _, c := range clients() {
		if len(o.Clients) > 0 && !slices.Contains(o.Clients, c.name) {
			continue
		}
		if c.available() {
			out = append(out, c)
		}
	}
	return out
}

// runScenario runs every round; within a round each client uploads then
// downloads, and the first client moves one place on each round.
func (e *env) runScenario(ctx context.Context, rep *report, sc scenario) error {
	var cs []client
	for _, c := range rep.clients {
		if c.in(sc) {
			cs = append(cs, c)
		}
	}
	for round := range e.o.Rounds {
		for i := range cs {
			c := cs[(i+round)%len(cs)]
			if c.cli && round >= e.o.CLIRounds {
				continue
			}
			for _, op := range []string{opUpload, opDownload} {
				if err := ctx.Err(); err != nil {
					return err
				}
				s, err := e.measure(ctx, c, sc, op, round)
				status := "ok"
				if err != nil {
					status = err.Error()
					rep.fail(sc.name, op, c.name, err)
				} else {
					rep.add(sc.name, op, c.name, s)
				}
				fmt.Fprintf(e.log, "%-9s r%d %-8s %-15s %8.1f MB/s %7.0f files/s %6.2f CPU s %5.0f MiB  %s\n",
					sc.name, round, op, c.name, s.mbps(), s.filesps(), s.CPU, float64(s.MaxRSS)/(1<<20), status)
			}
		}
	}
	return nil
}

// spec describes one child's job.
func (e *env) spec(c client, sc scenario, op string, round int) *childSpec {
	s := &childSpec{
		Client:    c.name,
		Op:        op,
		Plain:     e.plain.url,
		Bucket:    bucketName,
		Parallel:  cmp.Or(clientParallel(c.name), sc.parallel),
		ChunkSize: e.o.ChunkSize,
		Faults:    sc.faults,
		Capped:    sc.capped || sc.wire && !sc.small,
		ConfigDir: filepath.Join(e.work, "config", c.name),
		CAFile:    e.caFile(c, sc, op),
		// On the wire the official client sends small files its fastest
		// way (official-single's): at 16 MiB chunks each writer holds a
		// chunk's buffer, 2,000 small files take minutes.
		SingleRequest: sc.wire && sc.small,
	}
	if sc.tls && (c.name == clientHTTP || c.name == clientHTTPCRC) {
		s.Plain = e.plainTLS.url
	}
	tag := fmt.Sprintf("%s/%s/r%d", c.name, sc.name, round)
	if e.o.ProfileDir != "" {
		s.Profile = filepath.Join(e.o.ProfileDir, strings.ReplaceAll(tag, "/", "-")+"-"+op+".pprof")
	}
	group := path.Dir(sc.files[0].Object) // "small" or "."
	if op == opUpload {
		s.GCS = e.fakes.server(c.name, op, sc).URL()
		s.Prefix = "up/" + tag + "/"
		s.Files = sc.files
		s.SrcDir = filepath.Join(e.data.Dir, filepath.FromSlash(group))
		return s
	}
	s.GCS = e.fakes.server(c.name, op, sc).URL()
	s.Prefix = dataPrefix
	s.DstDir = filepath.Join(e.work, "dl", strings.ReplaceAll(tag, "/", "-"))
	for _, f := range sc.files {
		s.Files = append(s.Files, fileRef{Path: filepath.Join(s.DstDir, path.Base(f.Object)), Object: f.Object, Size: f.Size})
	}
	return s
}
