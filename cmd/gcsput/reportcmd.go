package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"

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

// mergeReports reads each output's summary, asks shard.Verdict which are the
// job's and what is wrong, and prints the merged counts.
func (a *app) mergeReports(files []string, asJSON bool) error {
	m := mergedReport{summaryRecord: summaryRecord{Type: "report"}, Outputs: len(files)}
	var outs []shard.Output
	sums := map[string]summaryRecord{}
	for _, f := range files {
		sum, err := lastSummary(f)
		if err != nil {
			m.Problems = append(m.Problems, err.Error())
			continue
		}
		o := shard.Output{File: f, Shard: sum.Shard, Job: fmt.Sprint(sum.Job)}
		if sum.Job != nil {
			o.JobID = sum.Job.ID
		}
		outs, sums[f] = append(outs, o), sum
	}
	ours, problems := shard.Verdict(outs)
	m.Problems = append(m.Problems, problems...)
	for _, o := range ours {
		if m.Job == nil {
			m.Job = sums[o.File].Job
		}
		m.add(sums[o.File])
	}
	if m.Failed > 0 {
		m.Problems = append(m.Problems, fmt.Sprintf("%d transfers failed", m.Failed))
	}
	if m.Interrupted > 0 {
		m.Problems = append(m.Problems, fmt.Sprintf("%d transfers were interrupted", m.Interrupted))
	}
	return a.printReport(m, asJSON)
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
