package main

import (
	"context"
	"fmt"
	"strings"
)

var resumeCommand = &command{
	name:    "resume",
	args:    "[flags]",
	summary: "finish every upload and download that was cut short",
	help: `
Finishes the transfers saved in the state directory (see 'gcsput sessions ls') with the
options they were started with. Each upload continues from the offset the server reports,
after checking that the local file has not changed since (size, mtime, inode); a changed
file, or a session GCS no longer knows, starts over and says so. A composite upload (see
'gcsput cp --help') sends none of its finished components again and continues each one in
flight from the server's offset, then composes. Each download continues its
partial file if the object's generation is unchanged. Each copy between gs:// locations
continues from its saved rewrite token if the source is still the generation it was copying
(else it copies the new one from the start, and says so), into the destination the record
holds whole: its KMS key, preconditions, class and metadata; a copy or upload started under a
customer-supplied key needs that key again (give it as you did), and is refused without it.
A move whose source's delete went unconfirmed is finished. Output and exit codes are those of
'gcsput cp'.

A transfer that can never finish (an upload whose file is gone, a download or copy whose source
object is gone, a record edited by hand) fails once, with "cannot finish: " and the reason; later
resumes skip it, and 'gcsput sessions gc' removes it.

Running the interrupted 'gcsput cp' command again does the same for its own files.

Examples:
  gcsput resume
  gcsput resume -j 16 --json > resumed.ndjson
  gcsput resume --state-dir /var/lib/backup-state
`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		var r remoteFlags
		var t transferFlags
		var st stateFlags
		t.register(fs)
		st.register(fs)
		r.register(fs)
		return func(ctx context.Context, ops []string) error {
			if len(ops) > 0 {
				return usagef("resume takes no operands: it finishes every saved transfer (see 'gcsput sessions ls')")
			}
			if err := r.check(); err != nil {
				return err
			}
			if err := t.check(); err != nil {
				return err
			}
			return a.resume(ctx, jobConfig{remote: &r, transfer: &t, stateDir: st.stateDir})
		}
	},
}

func (a *app) resume(ctx context.Context, cfg jobConfig) error {
	j, err := a.newJob(ctx, cfg)
	if err != nil {
		return err
	}
	defer j.close()
	recs, err := j.client.Sessions()
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		if !cfg.transfer.quiet {
			fmt.Fprintln(a.stderr, "nothing to resume")
		}
		return nil
	}
	for _, rec := range recs {
		url, local := rec.Dest, rec.Source
		if strings.HasPrefix(rec.Source, "gs://") {
			url, local = rec.Source, rec.Dest
		}
		size := rec.Size
		if size >= 0 {
			// The bar counts the whole file; what the server already has arrives as the
			// first progress report.
			j.expect(url, local, size)
		}
	}
	_, _ = j.client.Resume(ctx) // each result went to j.add as it ended
	return j.finish()
}
