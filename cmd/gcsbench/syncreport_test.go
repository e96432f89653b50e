package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/cmd/gcsbench/internal/usage"
)

// TestSyncFlags: the sync scenario runs only when named, takes its sizes
// from its flags and refuses a tree too small to change 1 % of.
func TestSyncFlags(t *testing.T) {
	o, err := parseFlags([]string{"-scenarios", "sync", "-sync-files", "2000", "-sync-large", "1", "-sync-large-size", "8MiB"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if !o.selects(scenarioSync) || o.selects(scenarioManyFiles) || o.SyncFiles != 2000 || o.SyncFileSize != 4<<10 ||
		o.SyncLarge != 1 || o.SyncLargeSize != 8<<20 || o.SyncChange != 1 {
		t.Errorf("-scenarios sync …: %+v", o)
	}
	if o, _ := parseFlags(nil, &bytes.Buffer{}); o.selects(scenarioSync) || o.SyncFiles != 1000000 {
		t.Errorf("by default sync is selected (%v) or -sync-files is %d", o.selects(scenarioSync), o.SyncFiles)
	}
	for args, want := range map[string]string{
		"-sync-files 99":       "-sync-files must be at least 100",
		"-sync-change 0":       "-sync-change must be a per cent",
		"-sync-file-size 4KB":  `bad size "4KB"`,
		"-sync-large-size 1GB": `bad size "1GB"`,
	} {
		if _, err := parseFlags(strings.Fields(args), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to contain %q", args, err, want)
		}
	}
}

// syncRun is a report of a tree of 1,000 MiB with 10 MiB changed, where
// gcsput reads read[step] MiB beyond its 40 MiB start-up and takes
// seconds[step], and gcloud's unchanged resync takes 10 s.
func syncRun(read, seconds map[string]float64, rss int64) *syncReport {
	r := &syncReport{o: options{SyncFiles: 100000, SyncFileSize: 4096, SyncChange: 1},
		treeBytes: 1000 << 20, changedBytes: 10 << 20, startup: map[string]int64{clientGcsput: 40 << 20}}
	for _, step := range syncSteps {
		r.add(syncMeasure{client: clientGcsput, step: step, dropped: true,
			Result: usage.Result{Seconds: seconds[step], ReadBytes: 40<<20 + int64(read[step]*(1<<20)), PeakRSS: rss}})
	}
	r.add(syncMeasure{client: clientGcloud, step: "unchanged", dropped: true, Result: usage.Result{Seconds: 10}})
	return r
}

func TestSyncTargets(t *testing.T) {
	good := syncRun(map[string]float64{"first": 1000, "unchanged": 9, "changed": 19}, map[string]float64{"unchanged": 2}, 200<<20)
	bad := syncRun(map[string]float64{"first": 1000, "unchanged": 11, "changed": 21}, map[string]float64{"unchanged": 2.1}, 300<<20)
	for _, c := range []struct {
		r    *syncReport
		want []string
	}{
		{good, []string{
			"| unchanged resync reads ≤ 1 % of the tree | 9.0 MiB of 1000 MiB (0.90 %) | PASS |",
			"| unchanged resync ≤ 0.2 × gcloud storage rsync's time | 2.00 s vs 10.00 s (0.20 ×) | PASS |",
			"| 1 % changed: reads ≤ the changed bytes + 1 % of the tree | 19.0 MiB (changed 10.0 MiB, limit 20.0 MiB) | PASS |",
			"| unchanged sync ≤ 256 MiB peak RSS (the target is at 1,000,000 files; here 100000) | 200 MiB | PASS |",
			"| gcsput | unchanged | 2.00 | 49.0 | 9.0 | 200 | 0 | dropped |",
		}},
		{bad, []string{
			"| 11.0 MiB of 1000 MiB (1.10 %) | FAIL |",
			"(0.21 ×) | FAIL |",
			"| 21.0 MiB (changed 10.0 MiB, limit 20.0 MiB) | FAIL |",
			"| first sync ≤ 256 MiB peak RSS (the target is at 1,000,000 files; here 100000) | 300 MiB | FAIL |",
		}},
	} {
		var b strings.Builder
		c.r.write(&b)
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("report lacks %q:\n%s", w, b.String())
			}
		}
	}
}

// TestSyncReportSaysWhatDidNotRun: a client not installed, a failed step
// and a page cache that could not be dropped are in the report, and the
// targets that need them are not judged.
func TestSyncReportSaysWhatDidNotRun(t *testing.T) {
	r := &syncReport{o: options{SyncFiles: 1000, SyncFileSize: 4096, SyncChange: 1}, treeBytes: 4 << 20, startup: map[string]int64{}}
	r.skipped = append(r.skipped, "rclone: not installed (exec: \"rclone\": executable file not found in $PATH)")
	r.add(syncMeasure{client: clientGcsput, step: "first", Result: usage.Result{Seconds: 1}})
	r.add(syncMeasure{client: clientGcsput, step: "unchanged", err: errors.New("gcsput unchanged: exit code 1")})
	var b strings.Builder
	r.write(&b)
	for _, w := range []string{
		"skipped rclone: not installed",
		"| gcsput | first | 1.00 | 0.0 | 0.0 | 0 | 0 | NOT dropped (no write access to /proc/sys/vm/drop_caches) |",
		"| gcsput | unchanged | FAILED |",
		"FAILED gcsput unchanged: exit code 1",
		"| unchanged resync reads ≤ 1 % of the tree | gcsput's unchanged resync did not run | not judged |",
		"| unchanged resync ≤ 0.2 × gcloud storage rsync's time | gcsput's or gcloud's unchanged resync did not run | not judged |",
	} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("report lacks %q:\n%s", w, b.String())
		}
	}
}
