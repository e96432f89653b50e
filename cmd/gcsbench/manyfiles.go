package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gcsput/gcsput/cmd/gcsbench/internal/usage"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

// The manyfiles scenario (issue 16): the gcsput command, as a user runs it,
// copies a tree of o.ManyFiles empty and one-byte files to fakegcs's discard
// backend, once as one process and once as manyShards processes at the same
// time, each with its own --shard. Its reference is the same command on a
// tree of manyRefFiles such files, measured the same way in the same run, so
// the ratio of the two rates is what the size of the tree costs.
const (
	scenarioManyFiles = "manyfiles"
	manyParallel      = 32   // -j of every gcsput process
	manyShards        = 4    // processes of the sharded run
	manyRefFiles      = 2000 // files of the reference tree
	// manyRefRuns is how many times the reference runs, half before and
	// half after the single process, which it brackets; its figures are the
	// medians. A run takes a fifth of a second, so a moment of load from
	// elsewhere on the machine moves one run's rate by half.
	manyRefRuns = 10
	manyPerDir  = 1000 // files to a directory
	// manyPrefix is where every run's objects go, each on a fakegcs of its
	// own.
	manyPrefix = "many/"
)

// manyEnv is what the manyfiles scenario's steps share.
type manyEnv struct {
	o        options
	cmdusage string // the executable that starts and measures each gcsput
	bin      string // the gcsput executable
	dir      string // trees, state directories and outputs
	log      io.Writer
	// newServer starts the fakegcs of one measurement; nil means
	// newManyServer.
	newServer func() (*fakegcs.Server, error)
}

// newManyServer starts a fakegcs that keeps only the metadata of what it
// receives and computes no MD5, so an upload measures the client.
func newManyServer() (*fakegcs.Server, error) {
	return fakegcs.New(fakegcs.Options{Backend: fakegcs.BackendDiscard, Buckets: []string{bucketName}, DisableMD5: true})
}

// run builds the trees and the binary, then measures the reference, the
// single process and the shards into rep. A failed measurement is recorded
// in rep.errs and the next one runs; an error stops the scenario.
func (m *manyEnv) run(ctx context.Context, rep *manyReport) error {
	if err := os.MkdirAll(m.dir, 0o755); err != nil {
		return err
	}
	start := time.Now()
	var err error
	if m.cmdusage, m.bin, err = buildTools(ctx, m.o.Gcsput, m.dir); err != nil {
		return err
	}
	ref, tree := filepath.Join(m.dir, "ref"), filepath.Join(m.dir, "tree")
	if err := buildTree(ctx, ref, manyRefFiles); err != nil {
		return err
	}
	if err := buildTree(ctx, tree, m.o.ManyFiles); err != nil {
		return err
	}
	fmt.Fprintf(m.log, "manyfiles: %d + %d files in %s, %s; setup %.1fs\n",
		m.o.ManyFiles, manyRefFiles, m.dir, m.bin, time.Since(start).Seconds())
	m.reference(ctx, rep, ref, 0, manyRefRuns/2)
	if r, err := m.measure(ctx, tree, m.o.ManyFiles, "single"); rep.record("1 process", r, err) {
		rep.single = &r
	}
	m.reference(ctx, rep, ref, manyRefRuns/2, manyRefRuns)
	r, err := m.measure(ctx, tree, m.o.ManyFiles, "shard")
	if rep.record(fmt.Sprintf("%d shards", manyShards), r, err) {
		rep.shards = &r
	}
	// The shards' verdict stands even when a shard failed: the target
	// reports what fakegcs counted.
	rep.shardsOnce = r.once
	return ctx.Err()
}

// reference measures the reference runs from to to-1 on the tree ref.
func (m *manyEnv) reference(ctx context.Context, rep *manyReport, ref string, from, to int) {
	for i := from; i < to; i++ {
		r, err := m.measure(ctx, ref, manyRefFiles, fmt.Sprintf("ref%d", i))
		if rep.record("reference", r, err) {
			rep.ref = append(rep.ref, r)
		}
	}
}

// manyProc is one measured gcsput process.
type manyProc struct {
	name string // "1 process", "shard 0/4", ...
	usage.Result
	summary gcsputSummary
}

// manyRun is one measurement: one gcsput process, or the shards at once.
type manyRun struct {
	procs []manyProc
	// srvCPU is the CPU seconds of this process, fakegcs's, while they ran.
	srvCPU float64
	// once is what fakegcs's insert counts say about the tree's files; nil
	// when they could not be taken.
	once *onceResult
}

// measure copies the tree of n files with one gcsput process (tag "ref*",
// "single") or manyShards of them at once ("shard"), each started by
// cmdusage, to a fakegcs of its own that keeps no content, and
// takes fakegcs's insert counts. The error is that of a process that failed;
// whether each file arrived exactly once is in the run's once.
func (m *manyEnv) measure(ctx context.Context, tree string, n int, tag string) (manyRun, error) {
	start := m.newServer
	if start == nil {
		start = newManyServer
	}
	srv, err := start()
	if err != nil {
		return manyRun{}, err
	}
	defer srv.Close()
	shards := []string{""}
	if tag == "shard" {
		shards = shards[:0]
		for i := range manyShards {
			shards = append(shards, fmt.Sprintf("%d/%d", i, manyShards))
		}
	}
	run := manyRun{procs: make([]manyProc, len(shards))}
	errs := make([]error, len(shards))
	before := selfCPU()
	var wg sync.WaitGroup
	for i, sh := range shards {
		wg.Go(func() { run.procs[i], errs[i] = m.gcsput(ctx, srv, tree, n, fmt.Sprintf("%s%d", tag, i), sh) })
	}
	wg.Wait()
	run.srvCPU = selfCPU() - before
	once := checkOnce(srv.InsertCounts(bucketName), manyPrefix, n)
	run.once = &once
	m.logRun(tag, run)
	return run, errors.Join(errs...)
}

func (m *manyEnv) logRun(tag string, run manyRun) {
	for _, p := range run.procs {
		fmt.Fprintf(m.log, "manyfiles %-7s %-9s %8d files %7.2fs %7.0f files/s %6.2f CPU s %5.0f MiB\n",
			tag, p.summary.Shard, p.summary.Uploaded, p.Seconds, p.filesps(), p.CPU, float64(p.PeakRSS)/(1<<20))
	}
	fmt.Fprintf(m.log, "manyfiles %-7s fakegcs: %s\n", tag, run.once)
}

// gcsput runs `gcsput cp -r -j 32 --json [--shard SHARD] TREE gs://BUCKET/many`
// against srv and reads its summary. Its per-file --json lines go to a file
// that is removed once the summary is read.
func (m *manyEnv) gcsput(ctx context.Context, srv *fakegcs.Server, tree string, n int, tag, shard string) (manyProc, error) {
	p := manyProc{name: "1 process"}
	args := []string{m.bin, "cp", "-r", "-j", fmt.Sprint(manyParallel), "--json",
		"--endpoint", srv.URL(), "--state-dir", filepath.Join(m.dir, "state", tag)}
	if shard != "" {
		p.name = "shard " + shard
		args = append(args, "--shard", shard)
	}
	args = append(args, tree, "gs://"+bucketName+"/"+manyPrefix[:len(manyPrefix)-1])
	spec := usage.Spec{Args: args, Stdout: filepath.Join(m.dir, tag+".ndjson"), Stderr: filepath.Join(m.dir, tag+".stderr")}
	defer os.Remove(spec.Stdout)
	// A minute per 60,000 files on top of a child's usual bound.
	res, err := m.runCLI(ctx, spec, childTimeout+time.Duration(n)*time.Millisecond)
	p.Result = res
	if err != nil {
		return p, err
	}
	p.summary, err = readSummary(spec.Stdout)
	if err == nil && (res.ExitCode != 0 || p.summary.Failed > 0) {
		err = fmt.Errorf("exit code %d, %d failed", res.ExitCode, p.summary.Failed)
	}
	if err != nil {
		stderr, _ := os.ReadFile(spec.Stderr)
		return p, fmt.Errorf("gcsput %s: %w; stderr: %s", shard, err, tail(string(stderr)))
	}
	return p, nil
}

// gcsputSummary is the part of gcsput's --json summary line the scenario
// reads.
type gcsputSummary struct {
	Type     string `json:"type"` // "summary"
	Shard    string `json:"shard"`
	Files    int    `json:"files"`
	Uploaded int    `json:"uploaded"`
	Failed   int    `json:"failed"`
}

// readSummary reads the summary from the last line of a --json output,
// without reading the million lines before it.
func readSummary(path string) (gcsputSummary, error) {
	f, err := os.Open(path)
	if err != nil {
		return gcsputSummary{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return gcsputSummary{}, err
	}
	buf := make([]byte, min(fi.Size(), 4096))
	if _, err := f.ReadAt(buf, fi.Size()-int64(len(buf))); err != nil {
		return gcsputSummary{}, err
	}
	buf = bytes.TrimRight(buf, "\n")
	var s gcsputSummary
	if err := json.Unmarshal(buf[bytes.LastIndexByte(buf, '\n')+1:], &s); err != nil || s.Type != "summary" {
		return s, fmt.Errorf("no summary at the end of gcsput's --json output (%v)", err)
	}
	return s, nil
}

// buildTree writes n files named by manyName under dir, the even ones empty
// and the odd ones one byte: the scenario's "empty or 1-byte files".
func buildTree(ctx context.Context, dir string, n int) error {
	dirs := (n + manyPerDir - 1) / manyPerDir
	return forEach(ctx, dirs, runtime.GOMAXPROCS(0), func(ctx context.Context, d int) error {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(manyName(d*manyPerDir))), 0o755); err != nil {
			return err
		}
		for i := d * manyPerDir; i < min(n, (d+1)*manyPerDir); i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, manyName(i)), []byte("x")[:i%2], 0o644); err != nil {
				return err
			}
		}
		return nil
	})
}

// manyName is the path of a tree's i-th file, relative to the tree, with
// "/" separators: manyPerDir files to a directory.
func manyName(i int) string { return fmt.Sprintf("d%04d/f%07d", i/manyPerDir, i) }

// median of what f says of each run; NaN for none.
func medianOf[T any](v []T, f func(T) float64) float64 {
	return median(slices.Collect(func(yield func(float64) bool) {
		for _, x := range v {
			if !yield(f(x)) {
				return
			}
		}
	}))
}
