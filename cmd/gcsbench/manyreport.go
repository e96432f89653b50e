package main

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// manyReport holds the manyfiles scenario's runs and prints its table and
// targets.
type manyReport struct {
	files int // files of the tree
	// ref are the reference runs that succeeded; single and shards are nil
	// when a process failed.
	ref            []manyRun
	single, shards *manyRun
	// shardsOnce is what fakegcs counted in the sharded run, kept even when
	// a shard failed; nil when the counts could not be taken.
	shardsOnce *onceResult
	errs       []string
}

// record notes in errs a run that failed, or whose objects fakegcs did not
// count exactly once, and reports whether the run's figures stand: whether
// every process succeeded.
func (rep *manyReport) record(name string, r manyRun, err error) bool {
	if err != nil {
		rep.errs = append(rep.errs, fmt.Sprintf("%s: %v", name, err))
	}
	if r.once != nil && !r.once.ok() {
		rep.errs = append(rep.errs, fmt.Sprintf("%s: fakegcs's insert counts: %s", name, r.once))
	}
	return err == nil
}

func (p manyProc) filesps() float64 {
	if p.Seconds <= 0 {
		return 0
	}
	return float64(p.summary.Uploaded) / p.Seconds
}

// manyRow is one line of the table.
type manyRow struct {
	name                       string
	files                      float64
	secs, filesps, cpu, rssMiB float64
	srvCPU                     float64 // NaN: shared with other processes
}

func procRow(name string, p manyProc, srvCPU float64) manyRow {
	return manyRow{name, float64(p.summary.Uploaded), p.Seconds, p.filesps(), p.CPU, float64(p.PeakRSS) / (1 << 20), srvCPU}
}

// rows are the reference (medians), the single process, each shard and the
// shards together: their files, the wall time from the first start to the
// last exit, the sum of their CPU and the largest peak RSS.
func (rep *manyReport) rows() []manyRow {
	var out []manyRow
	if len(rep.ref) > 0 {
		p := func(r manyRun) manyProc { return r.procs[0] }
		out = append(out, manyRow{
			name:    fmt.Sprintf("%d files (reference, median of %d)", manyRefFiles, len(rep.ref)),
			files:   medianOf(rep.ref, func(r manyRun) float64 { return float64(p(r).summary.Uploaded) }),
			secs:    medianOf(rep.ref, func(r manyRun) float64 { return p(r).Seconds }),
			filesps: rep.refRate(),
			cpu:     medianOf(rep.ref, func(r manyRun) float64 { return p(r).CPU }),
			rssMiB:  medianOf(rep.ref, func(r manyRun) float64 { return float64(p(r).PeakRSS) / (1 << 20) }),
			srvCPU:  medianOf(rep.ref, func(r manyRun) float64 { return r.srvCPU }),
		})
	}
	if rep.single != nil {
		out = append(out, procRow("1 process", rep.single.procs[0], rep.single.srvCPU))
	}
	if rep.shards == nil {
		return out
	}
	all := manyRow{name: fmt.Sprintf("%d shards at once", len(rep.shards.procs)), srvCPU: rep.shards.srvCPU}
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	for _, p := range rep.shards.procs {
		out = append(out, procRow(p.name, p, math.NaN()))
		all.files += float64(p.summary.Uploaded)
		all.cpu += p.CPU
		all.rssMiB = max(all.rssMiB, float64(p.PeakRSS)/(1<<20))
		first, last = min(first, p.Start), max(last, p.End)
	}
	all.secs = float64(last-first) / 1e9
	all.filesps = all.files / all.secs
	return append(out, all)
}

// refRate is the reference's files/s, the median of its runs.
func (rep *manyReport) refRate() float64 {
	return medianOf(rep.ref, func(r manyRun) float64 { return r.procs[0].filesps() })
}

// write prints the scenario's table, targets and failures as Markdown.
func (rep *manyReport) write(w io.Writer) {
	fmt.Fprintf(w, "manyfiles: `gcsput cp -r -j %d --json` of %d files (half empty, half 1 byte; %d to a directory) to fakegcs's discard backend, "+
		"the time from starting gcsput to its exit; reference: the same on %d such files, median of %d runs, half before and half after the 1 process; "+
		"then %d processes at once with --shard I/%d on the same tree\n\n",
		manyParallel, rep.files, manyPerDir, manyRefFiles, manyRefRuns, manyShards, manyShards)
	fmt.Fprintln(w, "| run | files | seconds | files/s | CPU s | peak RSS MiB | srv CPU s |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|")
	for _, r := range rep.rows() {
		srv := "–"
		if !math.IsNaN(r.srvCPU) {
			srv = fmt.Sprintf("%.2f", r.srvCPU)
		}
		fmt.Fprintf(w, "| %s | %.0f | %.2f | %.0f | %.2f | %.0f | %s |\n", r.name, r.files, r.secs, r.filesps, r.cpu, r.rssMiB, srv)
	}
	fmt.Fprintln(w, "\nTargets (issue 16):")
	fmt.Fprintln(w)
	for _, t := range rep.targets() {
		fmt.Fprintf(w, "- %s %s: %s\n", t.status, t.name, t.detail)
	}
	if len(rep.errs) > 0 {
		fmt.Fprintln(w, "\nFailures (manyfiles):")
		for _, e := range rep.errs {
			fmt.Fprintf(w, "- %s\n", e)
		}
	}
}

// manyRSSLimitMiB and manyRateRatio are issue 16's targets.
const (
	manyRSSLimitMiB = 256
	manyRateRatio   = 0.8
)

// targets judges issue 16's targets: every gcsput process's peak RSS, the
// single process's rate against the reference's (with the CPU per file as
// context), and the shards' union.
func (rep *manyReport) targets() []target {
	out := []target{rep.rssTarget(), rep.rateTarget()}
	if rep.single != nil && len(rep.ref) > 0 {
		out = append(out, rep.cpuInfo())
	}
	return append(out, rep.onceTarget())
}

// cpuInfo is not a target but the files/s target's context: the CPU time
// per file of gcsput and of fakegcs, single process against reference. Load
// from elsewhere on a shared machine moves wall time, and so files/s, far
// more than it moves CPU time.
func (rep *manyReport) cpuInfo() target {
	perFile := func(r manyRun, cpu float64) float64 {
		return cpu / float64(max(r.procs[0].summary.Uploaded, 1)) * 1e6
	}
	client := func(r manyRun) float64 { return perFile(r, r.procs[0].CPU) }
	server := func(r manyRun) float64 { return perFile(r, r.srvCPU) }
	both := func(r manyRun) float64 { return client(r) + server(r) }
	s, ref := *rep.single, rep.ref
	return target{
		name:   fmt.Sprintf("manyfiles upload: CPU µs per file, %d files vs %d", rep.files, manyRefFiles),
		status: "info",
		detail: fmt.Sprintf("gcsput %.0f vs %.0f, fakegcs %.0f vs %.0f, both %.0f vs %.0f (%.2f×)",
			client(s), medianOf(ref, client), server(s), medianOf(ref, server), both(s), medianOf(ref, both), both(s)/medianOf(ref, both)),
	}
}

func (rep *manyReport) rssTarget() target {
	name := fmt.Sprintf("manyfiles upload: gcsput peak RSS ≤ %d MiB", manyRSSLimitMiB)
	if rep.single == nil && rep.shards == nil {
		return missing(name, "not measured")
	}
	var parts []string
	peak := 0.0
	for _, r := range []*manyRun{rep.single, rep.shards} {
		if r == nil {
			continue
		}
		p := slices.MaxFunc(r.procs, func(a, b manyProc) int { return cmp.Compare(a.PeakRSS, b.PeakRSS) })
		mib := float64(p.PeakRSS) / (1 << 20)
		peak = max(peak, mib)
		parts = append(parts, fmt.Sprintf("%s %.0f MiB", p.name, mib))
	}
	return judged(name, peak <= manyRSSLimitMiB, "%.0f MiB at most (%s)", peak, strings.Join(parts, ", "))
}

func (rep *manyReport) rateTarget() target {
	name := fmt.Sprintf("manyfiles upload: gcsput files/s ≥ %.1f× the %d-file rate", manyRateRatio, manyRefFiles)
	if rep.single == nil || len(rep.ref) == 0 {
		return missing(name, "not measured")
	}
	got, ref := rep.single.procs[0].filesps(), rep.refRate()
	return judged(name, got >= manyRateRatio*ref, "%.2f× (%.0f vs %.0f files/s)", got/ref, got, ref)
}

func (rep *manyReport) onceTarget() target {
	name := fmt.Sprintf("manyfiles %d shards: every file inserted exactly once", manyShards)
	if rep.shardsOnce == nil {
		return missing(name, "not measured")
	}
	return judged(name, rep.shardsOnce.ok(), "%s, by fakegcs's per-object insert counts", rep.shardsOnce)
}

// onceResult is what fakegcs's per-object insert counts say about the files
// of a tree: each should have been inserted exactly once, and nothing else.
type onceResult struct {
	files    int // files in the tree
	once     int // files whose object was inserted exactly once
	missing  int // files whose object was never inserted
	repeated int // files whose object was inserted more than once
	extra    int // objects that are no file of the tree
	// examples names a few of the faults, for the report.
	examples []string
}

func (c onceResult) ok() bool { return c.once == c.files && c.extra == 0 }

func (c onceResult) String() string {
	s := fmt.Sprintf("%d of %d files inserted exactly once, %d missing, %d more than once, %d other objects",
		c.once, c.files, c.missing, c.repeated, c.extra)
	if len(c.examples) > 0 {
		s += " (" + strings.Join(c.examples, ", ") + ")"
	}
	return s
}

// maxExamples bounds the names of each kind of fault onceResult shows.
const maxExamples = 3

// checkOnce compares counts (inserts by object name, as
// fakegcs.Server.InsertCounts returns them) with the n files of a manyName
// tree uploaded under prefix.
func checkOnce(counts map[string]int, prefix string, n int) onceResult {
	r := onceResult{files: n}
	var repeated, extra []string
	for name, c := range counts {
		rest, ok := strings.CutPrefix(name, prefix)
		switch {
		case !ok || !isManyName(rest, n):
			r.extra++
			extra = append(extra, "other "+name)
		case c == 1:
			r.once++
		case c > 1:
			r.repeated++
			repeated = append(repeated, fmt.Sprintf("%d× %s", c, name))
		}
	}
	r.missing = n - r.once - r.repeated
	for i := 0; i < n && len(r.examples) < min(r.missing, maxExamples); i++ {
		if name := prefix + manyName(i); counts[name] < 1 {
			r.examples = append(r.examples, "missing "+name)
		}
	}
	for _, ex := range [][]string{repeated, extra} {
		slices.Sort(ex)
		r.examples = append(r.examples, ex[:min(len(ex), maxExamples)]...)
	}
	return r
}

// isManyName reports whether rest is the name of one of the n files of a
// manyName tree.
func isManyName(rest string, n int) bool {
	_, f, ok := strings.Cut(rest, "/f")
	i, err := strconv.Atoi(f)
	return ok && err == nil && i >= 0 && i < n && manyName(i) == rest
}
