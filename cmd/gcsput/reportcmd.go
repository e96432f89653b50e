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
	help: `
Reads the --json output (NDJSON) of each worker of a sharded job and prints one summary: the
files, bytes and outcomes of all of them. The exit code gates a pipeline: 0 only when every
file ends with its summary line (the worker finished), every shard of the job is there (their
summaries say "shard": "I/N"; all N must be present, each once), and nothing failed or was
interrupted; 1 otherwise, with the reason on stderr.

Examples:
  gcsput report shard-*.ndjson
  gcsput report --json out/*.ndjson | jq .
`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		var asJSON bool
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
	shards := map[string][]string{} // "I/N" → the files that ran it
	count := 0
	for _, f := range files {
		sum, err := lastSummary(f)
		if err != nil {
			m.Problems = append(m.Problems, err.Error())
			continue
		}
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
		if sum.Shard != "" {
			shards[sum.Shard] = append(shards[sum.Shard], f)
			if sp, err := shard.Parse(sum.Shard); err == nil {
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
	if asJSON {
		printJSON(a.stdout, m)
	} else {
		fmt.Fprintf(a.stdout, "%d outputs: %s\n", len(files), summaryLine(m.summaryRecord))
	}
	if len(m.Problems) > 0 {
		for _, p := range m.Problems {
			fmt.Fprintf(a.stderr, "gcsput: report: %s\n", escapeText(p))
		}
		return &failedError{failed: len(m.Problems), total: len(files), noun: "checks"}
	}
	return nil
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
