package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/gcsput/gcsput/cmd/gcsbench/internal/usage"
)

// syncBenchmark runs the sync scenario in a directory of its own on a real
// disk: -tmpdir if given, else the system's temporary directory (never
// /dev/shm, whose reads are no disk reads).
func syncBenchmark(ctx context.Context, o options, rep *syncReport, log io.Writer) error {
	base := o.TempDir
	if base == "" {
		base = os.TempDir()
	}
	dir, err := os.MkdirTemp(base, "gcsbench-sync-")
	if err != nil {
		return err
	}
	rep.dir = dir
	rep.startup = map[string]int64{}
	e := &syncEnv{o: o, dir: dir, log: log}
	return e.run(ctx, rep)
}

// syncMeasure is one step of one client.
type syncMeasure struct {
	client, step string
	usage.Result
	requests int   // requests fakegcs counted
	dropped  bool  // the page cache was dropped before the step
	err      error // the step failed
}

// syncReport is the sync scenario's part of the report.
type syncReport struct {
	o            options
	dir          string
	treeBytes    int64
	changedBytes int64
	measures     []syncMeasure
	skipped      []string // clients not run, and why
	// startup is what each client reads from disk to start ("version"
	// after a drop of the page cache); a step's tree reads are its reads
	// less this.
	startup map[string]int64
}

// treeReads is m's reads beyond its client's start-up, or all of them when
// the start-up was not measured.
func (r *syncReport) treeReads(m *syncMeasure) int64 {
	return max(0, m.ReadBytes-r.startup[m.client])
}

func (r *syncReport) add(m syncMeasure) { r.measures = append(r.measures, m) }

// find returns client's measure of step, nil if it did not run or failed.
func (r *syncReport) find(client, step string) *syncMeasure {
	for i := range r.measures {
		if m := &r.measures[i]; m.client == client && m.step == step && m.err == nil {
			return m
		}
	}
	return nil
}

// write prints the table, the targets and the failures as Markdown.
func (r *syncReport) write(w io.Writer) {
	o := r.o
	fmt.Fprintf(w, "## sync: %d × %s + %d × %d MiB (%.0f MiB) on %s; %g %% changed (%.1f MiB) before the last step\n\n",
		o.SyncFiles, sizeText(o.SyncFileSize), o.SyncLarge, o.SyncLargeSize>>20, mib(r.treeBytes), filepath.Dir(r.dir),
		o.SyncChange, mib(r.changedBytes))
	fmt.Fprintln(w, "| client | step | wall s | read from disk MiB | of it the tree's MiB | peak RSS MiB | requests | page cache |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|---|")
	for _, m := range r.measures {
		cache := "dropped"
		if !m.dropped {
			cache = "NOT dropped (no write access to /proc/sys/vm/drop_caches)"
		}
		if m.err != nil {
			fmt.Fprintf(w, "| %s | %s | FAILED | | | | %d | %s |\n", m.client, m.step, m.requests, cache)
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %.2f | %.1f | %.1f | %.0f | %d | %s |\n", m.client, m.step, m.Seconds,
			mib(m.ReadBytes), mib(r.treeReads(&m)), mib(m.PeakRSS), m.requests, cache)
	}
	fmt.Fprint(w, "\nThe tree's share is a step's reads less what the client reads to start (its `version`, page cache dropped):")
	for _, c := range syncClients() {
		if n, ok := r.startup[c.name]; ok {
			fmt.Fprintf(w, " %s %.1f MiB;", c.name, mib(n))
		}
	}
	fmt.Fprintln(w)
	for _, s := range r.skipped {
		fmt.Fprintf(w, "\nskipped %s\n", s)
	}
	fmt.Fprintln(w)
	r.writeTargets(w)
	for _, m := range r.measures {
		if m.err != nil {
			fmt.Fprintf(w, "\nFAILED %v\n", m.err)
		}
	}
}

// writeTargets prints issue 30's targets with PASS, FAIL or why they could
// not be judged.
func (r *syncReport) writeTargets(w io.Writer) {
	fmt.Fprintln(w, "| target | measured | verdict |")
	fmt.Fprintln(w, "|---|---|---|")
	row := func(target, measured string, pass *bool) {
		v := "not judged"
		if pass != nil {
			v = map[bool]string{true: "PASS", false: "FAIL"}[*pass]
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", target, measured, v)
	}
	verdict := func(ok bool) *bool { return &ok }
	un, ch := r.find(clientGcsput, "unchanged"), r.find(clientGcsput, "changed")
	first := r.find(clientGcsput, "first")
	if un == nil {
		row("unchanged resync reads ≤ 1 % of the tree", "gcsput's unchanged resync did not run", nil)
	} else {
		row("unchanged resync reads ≤ 1 % of the tree", fmt.Sprintf("%.1f MiB of %.0f MiB (%.2f %%)",
			mib(r.treeReads(un)), mib(r.treeBytes), 100*float64(r.treeReads(un))/float64(r.treeBytes)),
			verdict(r.treeReads(un)*100 <= r.treeBytes))
	}
	if gc := r.find(clientGcloud, "unchanged"); un == nil || gc == nil {
		row("unchanged resync ≤ 0.2 × gcloud storage rsync's time", "gcsput's or gcloud's unchanged resync did not run", nil)
	} else {
		row("unchanged resync ≤ 0.2 × gcloud storage rsync's time", fmt.Sprintf("%.2f s vs %.2f s (%.2f ×)",
			un.Seconds, gc.Seconds, un.Seconds/gc.Seconds), verdict(un.Seconds <= 0.2*gc.Seconds))
	}
	if ch == nil {
		row("1 % changed: reads what changed and little more", "gcsput's changed resync did not run", nil)
	} else {
		// "Little more": the changed bytes plus 1 % of the tree.
		limit := r.changedBytes + r.treeBytes/100
		row("1 % changed: reads ≤ the changed bytes + 1 % of the tree", fmt.Sprintf("%.1f MiB (changed %.1f MiB, limit %.1f MiB)",
			mib(r.treeReads(ch)), mib(r.changedBytes), mib(limit)), verdict(r.treeReads(ch) <= limit))
	}
	for _, m := range []*syncMeasure{first, un} {
		if m == nil {
			continue
		}
		target := fmt.Sprintf("%s sync ≤ 256 MiB peak RSS (the target is at 1,000,000 files; here %d)", m.step, r.o.SyncFiles)
		row(target, fmt.Sprintf("%.0f MiB", mib(m.PeakRSS)), verdict(m.PeakRSS <= 256<<20))
	}
	row("peak RSS grows ≤ 20 % from 100,000 to 1,000,000 files",
		"compare the peak RSS rows of a run with -sync-files 100000 and one with 1000000", nil)
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// sizeText is n in KiB or B.
func sizeText(n int64) string {
	if n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}
