package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/gcsput/gcsput/internal/shard"
)

var reportCommand = &command{
	name:    "report",
	args:    "[flags] FILE...",
	summary: "merge the --json outputs of the shards of one job into one verdict",
	help: `Reads the --json output of each worker of a sharded job and prints one summary; exit 0 only
when every shard of the one job is there, finished, with nothing failed or interrupted.`,
	examples: `
  gcsput report shard-*.ndjson
  gcsput report --json out/*.ndjson | jq .
`,
	see: `docs/scale-out.md for sharded jobs; docs/commands.md#gcsput-report for the rest; docs/flags.md for every flag in full.`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		var asJSON bool
		fs.Group("Output")
		fs.Bool(&asJSON, "json", "", "print the merged summary as one JSON object")
		return func(ctx context.Context, ops []string) error {
			if len(ops) == 0 {
				return usagef("name the --json outputs to merge, e.g. gcsput report shard-*.ndjson")
			}
			return a.mergeReports(ops, asJSON)
		}
	},
}

// mergedReport is report's verdict.
type mergedReport struct {
	summaryRecord
	Outputs  int      `json:"outputs"`
	Problems []string `json:"problems,omitempty"`
}

func (a *app) mergeReports(files []string, asJSON bool) error {
	m := mergedReport{summaryRecord: summaryRecord{Type: "report"}, Outputs: len(files)}
	var read []readSummary
	for _, f := range files {
		sum, err := lastSummary(f)
		if err != nil {
			m.Problems = append(m.Problems, err.Error())
			continue
		}
		read = append(read, readSummary{f, sum})
	}
	job, ours, odd := oneJob(read)
	m.Job = job
	m.Problems = append(m.Problems, odd...)
	shards := map[string][]string{} // "I/N" → the files that ran it
	count := 0
	for _, r := range ours {
		m.add(r.sum)
		if r.sum.Shard != "" {
			shards[r.sum.Shard] = append(shards[r.sum.Shard], r.file)
			if sp, err := shard.Parse(r.sum.Shard); err == nil {
				count = max(count, sp.Count)
			}
		}
	}
	m.Problems = append(m.Problems, shardProblems(shards, count)...)
	if m.Failed > 0 {
		m.Problems = append(m.Problems, fmt.Sprintf("%d transfers failed", m.Failed))
	}
	if m.Interrupted > 0 {
		m.Problems = append(m.Problems, fmt.Sprintf("%d transfers were interrupted", m.Interrupted))
	}
	return a.printReport(m, asJSON)
}

// readSummary is one output's file and its summary.
type readSummary struct {
	file string
	sum  summaryRecord
}

// add counts one output's summary into the merged one.
func (m *mergedReport) add(sum summaryRecord) {
	s := &m.summaryRecord
	s.Files += sum.Files
	s.Uploaded += sum.Uploaded
	s.Resumed += sum.Resumed
	s.Restarted += sum.Restarted
	s.Downloaded += sum.Downloaded
	s.Skipped += sum.Skipped
	s.Failed += sum.Failed
	s.Interrupted += sum.Interrupted
	s.Deleted += sum.Deleted
	s.Bytes += sum.Bytes
	s.Transferred += sum.Transferred
	s.Seconds = max(s.Seconds, sum.Seconds)
}

func (a *app) printReport(m mergedReport, asJSON bool) error {
	if asJSON {
		printJSON(a.stdout, m)
	} else {
		if m.Job != nil {
			fmt.Fprintf(a.stdout, "job %s\n", escapeText(m.Job.String()))
		}
		fmt.Fprintf(a.stdout, "%d outputs: %s\n", m.Outputs, summaryLine(m.summaryRecord))
	}
	if len(m.Problems) > 0 {
		for _, p := range m.Problems {
			fmt.Fprintf(a.stderr, "gcsput: report: %s\n", escapeText(p))
		}
		return &failedError{failed: len(m.Problems), total: m.Outputs, noun: "checks"}
	}
	return nil
}

// oneJob picks the job that most outputs name (the first of a tie) and
// returns its outputs; each output of another job, or naming none, is a
// problem that names its file. Outputs that name no job at all (a gcsput
// before jobs were named) are merged as before, on their shards alone.
func oneJob(read []readSummary) (*jobIdentity, []readSummary, []string) {
	votes := map[string]int{}
	var job *jobIdentity
	for _, r := range read {
		if r.sum.Job == nil {
			continue
		}
		votes[r.sum.Job.ID]++
		if job == nil || votes[r.sum.Job.ID] > votes[job.ID] {
			job = r.sum.Job
		}
	}
	if job == nil {
		return nil, read, nil
	}
	var ours []readSummary
	var odd []string
	for _, r := range read {
		if r.sum.Job != nil && r.sum.Job.ID == job.ID {
			ours = append(ours, r)
			continue
		}
		odd = append(odd, fmt.Sprintf("%s is not an output of this job: it names %s; the other %d name %s",
			r.file, r.sum.Job, votes[job.ID], job))
	}
	return job, ours, odd
}

// lastSummary returns the summary line of one --json output: its last line,
// which a worker writes when it ends.
func lastSummary(path string) (summaryRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return summaryRecord{}, err
	}
	defer f.Close()
	var last summaryRecord
	found := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var rec summaryRecord
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Type == "summary" {
			last, found = rec, true
		} else {
			found = false // a record after the summary: not the end of a run
		}
	}
	if err := sc.Err(); err != nil {
		return summaryRecord{}, fmt.Errorf("%s: %w", path, err)
	}
	if !found {
		return summaryRecord{}, fmt.Errorf("%s has no summary at its end: that worker did not finish", path)
	}
	return last, nil
}

// maxMissingNamed bounds the missing shards report names one by one.
const maxMissingNamed = 10

// shardProblems checks that shards 0..count-1 each ran exactly once. The
// count comes from the files, so the work is bounded by the files, not by
// it: a summary claiming "0/999999999" costs no more than any other.
func shardProblems(shards map[string][]string, count int) []string {
	var out []string
	ran := map[int]bool{} // the indices of this split that ran
	for _, spec := range sortedKeys(shards) {
		sp, err := shard.Parse(spec)
		switch {
		case err != nil || sp.Count != count:
			out = append(out, fmt.Sprintf("shard %s belongs to another split than /%d", spec, count))
			continue
		case len(shards[spec]) > 1:
			out = append(out, fmt.Sprintf("shard %s ran %d times: %s", spec, len(shards[spec]), strings.Join(shards[spec], ", ")))
		}
		ran[sp.Index] = true
	}
	named := 0
	for i := 0; i < count && named < maxMissingNamed; i++ {
		if !ran[i] {
			out = append(out, fmt.Sprintf("shard %d/%d is missing", i, count))
			named++
		}
	}
	if missing := count - len(ran); missing > named {
		out = append(out, fmt.Sprintf("%d shards of %d are missing in all", missing, count))
	}
	return out
}
