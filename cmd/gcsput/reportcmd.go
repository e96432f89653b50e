package main

import (
	"context"
	"fmt"

	"github.com/gcsput/gcsput/internal/jobrec"
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

// mergeReports merges the outputs (jobrec.Merge: which are the job's, what
// is wrong) and prints the verdict.
func (a *app) mergeReports(files []string, asJSON bool) error {
	return a.printReport(jobrec.Merge(files), asJSON)
}

func (a *app) printReport(m jobrec.Merged, asJSON bool) error {
	if asJSON {
		printJSON(a.stdout, m)
	} else {
		if m.Job != nil {
			fmt.Fprintf(a.stdout, "job %s\n", escapeText(m.Job.String()))
		}
		fmt.Fprintf(a.stdout, "%d outputs: %s\n", m.Outputs, summaryLine(m.Summary))
	}
	if len(m.Problems) > 0 {
		for _, p := range m.Problems {
			fmt.Fprintf(a.stderr, "gcsput: report: %s\n", escapeText(p))
		}
		return &failedError{failed: len(m.Problems), total: m.Outputs, noun: "checks"}
	}
	return nil
}
