package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// rowKey names one row of the table.
type rowKey struct{ scenario, op, client string }

// report collects the samples of a run and prints the table.
type report struct {
	o         options
	scenarios []scenario
	clients   []client
	samples   map[rowKey][]sample
	errors    map[rowKey][]error
	// many is the manyfiles scenario's part; nil when it did not run.
	many *manyReport
	// capacity is the capacity scenario's part; nil when it did not run.
	capacity *capacityReport
	// sync is the sync scenario's part; nil when it did not run.
	sync *syncReport
}

func newReport(o options, scs []scenario, cs []client) *report {
	return &report{o: o, scenarios: scs, clients: cs, samples: map[rowKey][]sample{}, errors: map[rowKey][]error{}}
}

func (r *report) add(sc, op, c string, s sample) {
	k := rowKey{sc, op, c}
	r.samples[k] = append(r.samples[k], s)
}

func (r *report) fail(sc, op, c string, err error) {
	k := rowKey{sc, op, c}
	r.errors[k] = append(r.errors[k], err)
}

func (r *report) clientNames() []string {
	var out []string
	for _, c := range r.clients {
		out = append(out, c.name)
	}
	return out
}

// row is the median of one row's samples; each figure is its own median.
type row struct {
	rowKey
	n                                  int
	mbps, filesps, cpu, rssMiB, srvCPU float64
	retries, slept, moved, faults      float64
	armed, requests                    float64
	// conns is the connections fakegcs accepted, connsBy those that carried
	// requests by protocol (see sample.Conns).
	conns   float64
	connsBy map[string]float64
	// mbPerCPU is MB moved per CPU second of the client.
	mbPerCPU float64
	// measured: retries and slept were measured (the Go clients).
	measured         bool
	xLoop, xOfficial float64 // NaN: no reference
}

func (r *report) row(k rowKey) (row, bool) {
	ss := r.samples[k]
	if len(ss) == 0 {
		return row{}, false
	}
	med := func(f func(sample) float64) float64 {
		v := make([]float64, len(ss))
		for i, s := range ss {
			v[i] = f(s)
		}
		return median(v)
	}
	return row{
		rowKey:   k,
		n:        len(ss),
		mbps:     med(sample.mbps),
		filesps:  med(sample.filesps),
		cpu:      med(func(s sample) float64 { return s.CPU }),
		rssMiB:   med(func(s sample) float64 { return float64(s.MaxRSS) / (1 << 20) }),
		srvCPU:   med(func(s sample) float64 { return s.SrvCPU }),
		retries:  med(func(s sample) float64 { return float64(s.Retries) }),
		slept:    med(func(s sample) float64 { return s.Slept }),
		moved:    med(func(s sample) float64 { return float64(s.Moved) }),
		faults:   med(func(s sample) float64 { return float64(s.Faults) }),
		armed:    med(func(s sample) float64 { return float64(s.FaultsArmed) }),
		requests: med(func(s sample) float64 { return float64(s.Requests) }),
		measured: ss[0].RetriesMeasured,
		conns:    med(func(s sample) float64 { return float64(s.Conns) }),
		connsBy:  medianBy(ss),
		mbPerCPU: med(func(s sample) float64 { return float64(s.Bytes) / 1e6 / s.CPU }),
	}, true
}

// medianBy is the median of each protocol's connections over the samples
// (0 in a sample without it).
func medianBy(ss []sample) map[string]float64 {
	out := map[string]float64{}
	for _, s := range ss {
		for p := range s.ConnsBy {
			out[p] = 0
		}
	}
	for p := range out {
		v := make([]float64, len(ss))
		for i, s := range ss {
			v[i] = float64(s.ConnsBy[p])
		}
		out[p] = median(v)
	}
	return out
}

// median of v (the mean of the middle two for an even count); v is sorted
// in place.
func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	m := len(v) / 2
	if len(v)%2 == 1 {
		return v[m]
	}
	return (v[m-1] + v[m]) / 2
}

// rows returns every row in table order, with its ratios filled in.
func (r *report) rows() []row {
	var out []row
	for _, sc := range r.scenarios {
		for _, op := range []string{opUpload, opDownload} {
			for _, c := range r.clients {
				rw, ok := r.row(rowKey{sc.name, op, c.name})
				if !ok {
					continue
				}
				rw.xLoop = ratio(rw.rate(sc), r.loopback(sc, op))
				rw.xOfficial = ratio(rw.rate(sc), r.officialBest(sc, op))
				out = append(out, rw)
			}
		}
	}
	return out
}

// rate is the figure a scenario is judged by: files/s for small files, MB/s
// otherwise.
func (rw row) rate(sc scenario) float64 {
	if sc.small {
		return rw.filesps
	}
	return rw.mbps
}

// loopback is the plain net/http rate of the scenario; the faults scenario,
// where it does not run, is held against the fault-free large file. The
// capped scenario has none: the plain server has no cap.
func (r *report) loopback(sc scenario, op string) float64 {
	name := sc.name
	switch {
	case sc.faults:
		name = scenarioLarge
	case sc.capped:
		return math.NaN()
	}
	rw, ok := r.row(rowKey{name, op, clientHTTP})
	if !ok {
		return math.NaN()
	}
	return rw.rate(sc)
}

// officialBest is the best rate of the official client's configurations in
// the scenario.
func (r *report) officialBest(sc scenario, op string) float64 {
	best := math.NaN()
	for _, c := range []string{clientOfficial, clientOfficialSingle} {
		if rw, ok := r.row(rowKey{sc.name, op, c}); ok && !(rw.rate(sc) <= best) {
			best = rw.rate(sc)
		}
	}
	return best
}

func ratio(a, b float64) float64 {
	if b == 0 || math.IsNaN(b) {
		return math.NaN()
	}
	return a / b
}

// write prints the tables, the targets and any failures as Markdown: the
// clients' scenarios, then manyfiles.
func (r *report) write(w io.Writer) {
	if len(r.scenarios) > 0 {
		r.writeTransfers(w)
	}
	if r.many != nil {
		if len(r.scenarios) > 0 {
			fmt.Fprintln(w)
		}
		r.many.write(w)
	}
	if r.capacity != nil {
		if len(r.scenarios) > 0 || r.many != nil {
			fmt.Fprintln(w)
		}
		r.capacity.write(w)
	}
	if r.sync != nil {
		if len(r.scenarios) > 0 || r.many != nil || r.capacity != nil {
			fmt.Fprintln(w)
		}
		r.sync.write(w)
	}
}

// writeTransfers prints the clients' tables (plaintext, then the wire's),
// targets and failures.
func (r *report) writeTransfers(w io.Writer) {
	if r.anyPlain() {
		r.writePlain(w)
	}
	r.writeWire(w)
	r.writeTargets(w)
	r.writeErrors(w)
}

// anyPlain reports whether the run had a scenario off the wire.
func (r *report) anyPlain() bool {
	return slices.ContainsFunc(r.scenarios, func(sc scenario) bool { return !sc.wire && !sc.tls })
}

// writePlain prints the plaintext scenarios' table, faults and capped
// tables.
func (r *report) writePlain(w io.Writer) {
	faults := "fixed faults"
	if r.o.FaultMode == faultsRandom {
		faults = fmt.Sprintf("fault rate %.0f%%", r.o.FaultRate*100)
	}
	fmt.Fprintf(w, "gcsbench: large file %s, %d × %s files at parallelism %s, chunk %s, %s, cap %s per connection, median of %d round(s) (gcloud/rclone: %d)\n\n",
		sizeString(r.o.Size), r.o.Files, sizeString(r.o.FileSize), joinInts(r.o.Parallel), sizeString(r.o.ChunkSize), faults,
		rateString(r.o.CapRate), r.o.Rounds, min(r.o.Rounds, r.o.CLIRounds))
	fmt.Fprintln(w, "| scenario | op | client | MB/s | files/s | CPU s | peak RSS MiB | srv CPU s | × loopback | × official |")
	fmt.Fprintln(w, "|---|---|---|--:|--:|--:|--:|--:|--:|--:|")
	for _, rw := range r.rows() {
		if r.onWire(rw.scenario) {
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.1f | %s | %.2f | %.0f | %.2f | %s | %s |\n",
			rw.scenario, rw.op, rw.client, rw.mbps, fmtFiles(rw.filesps), rw.cpu, rw.rssMiB, rw.srvCPU, fmtRatio(rw.xLoop), fmtRatio(rw.xOfficial))
	}
	r.writeFaults(w)
	r.writeCapped(w)
}

// writeFaults adds what the faults scenario cost each client.
func (r *report) writeFaults(w io.Writer) {
	var lines []string
	for _, rw := range r.rows() {
		if rw.scenario != scenarioFaults {
			continue
		}
		faults := fmt.Sprintf("%.0f", rw.faults)
		if r.o.FaultMode == faultsFixed {
			faults += fmt.Sprintf(" of %.0f", rw.armed)
		}
		retries, slept := "–", "–"
		if rw.measured {
			retries, slept = fmt.Sprintf("%.0f", rw.retries), fmt.Sprintf("%.1f", rw.slept)
		}
		lines = append(lines, fmt.Sprintf("| %s | %s | %s | %.0f | %s | %s | %.1f |",
			rw.op, rw.client, faults, rw.requests, retries, slept, rw.moved/(1<<20)))
	}
	if len(lines) == 0 {
		return
	}
	what := "each request failing with probability " + fmt.Sprintf("%.0f%%", r.o.FaultRate*100) + " (drawn from one stream: each client meets different faults)"
	if r.o.FaultMode == faultsFixed {
		what = "the same faults at the same places for every client, each once: upload: 503 on the session's initiation, " +
			"503 on the first data (from byte 0), nothing of it stored, its retry reset halfway through the first chunk " +
			"(a quarter of it persisted), the answer to the request that completes the upload lost; download: " +
			"503 on the first, its retry cut after 25 % of the object, the resumed download reset after a further 35 %"
	}
	fmt.Fprintf(w, "\nFaults scenario (medians): %s. Faults that fired; API requests fakegcs served; "+
		"retries and the time from each failed attempt to its retry, measured the same way below each Go client's "+
		"retry loop (– : a CLI, not measured); MiB fakegcs received (upload) or sent (download)\n", what)
	fmt.Fprintln(w, "\n| op | client | faults | requests | retries | slept s | moved MiB |\n|---|---|--:|--:|--:|--:|--:|")
	fmt.Fprintln(w, strings.Join(lines, "\n"))
}

func (r *report) writeErrors(w io.Writer) {
	if len(r.errors) == 0 {
		return
	}
	fmt.Fprintln(w, "\nFailures:")
	for _, sc := range r.scenarios {
		for _, op := range []string{opUpload, opDownload} {
			for _, c := range r.clients {
				for _, err := range r.errors[rowKey{sc.name, op, c.name}] {
					fmt.Fprintf(w, "- %s %s %s: %v\n", sc.name, op, c.name, err)
				}
			}
		}
	}
}

// fmtFiles keeps two decimals for the large file's fraction of a file per
// second.
func fmtFiles(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func fmtRatio(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.2f", v)
}

func sizeString(n int64) string {
	for _, u := range []struct {
		s string
		m int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.m && n%u.m == 0 {
			return fmt.Sprintf("%d %s", n/u.m, u.s)
		}
	}
	return fmt.Sprintf("%d B", n)
}

// rateString shows a rate in bytes per second as the table's MB/s.
func rateString(bps int64) string {
	return fmt.Sprintf("%g MB/s", float64(bps)/1e6)
}

func joinInts(v []int) string {
	var s []string
	for _, n := range v {
		s = append(s, fmt.Sprint(n))
	}
	return strings.Join(s, "/")
}
