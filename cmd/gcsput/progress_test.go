package main

import (
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/upload"
)

// With -v, a composite upload's retry names the user's file and the part
// ("big.bin part 2/4"), never the temporary component gs://bkt/gcsput-tmp/….
func TestE2EVerboseRetryNamesFileAndPart(t *testing.T) {
	e := newE2E(t, fakegcs.Fault{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk, Offset: new(int64(0)), Skip: 1,
		Kind: fakegcs.KindStatus, Status: 503})
	e.write("big.bin", 2<<20)
	r := e.must(nil, "cp", "-v", "-j", "1", "--parallel-threshold", "1MiB", "--component-size", "512KiB", "--chunk-size", "256KiB",
		fastRetry, "big.bin", "gs://bkt/big.bin")
	if !strings.Contains(r.stderr, "big.bin part 2/4: retry 1/12 in ") || strings.Contains(r.stderr, "gcsput-tmp") {
		t.Errorf("stderr:\n%s\nwant a retry line naming big.bin part 2/4 and no gcsput-tmp", r.stderr)
	}
}

// The bar's counts come from the library's BatchProgress: the ETA is labelled, retries
// and resumes are shown once there were any.
func TestBatchStatus(t *testing.T) {
	for _, tc := range []struct {
		b    upload.BatchProgress
		want string
	}{
		{upload.BatchProgress{Bytes: 20 << 20, ETA: -1}, "0 B/20.0 MiB"},
		{upload.BatchProgress{Bytes: 256 << 20, BytesDone: 12 << 20, Rate: 8 << 20, ETA: 30*time.Second + 400*time.Millisecond},
			"12.0 MiB/256.0 MiB 8.0 MiB/s ETA 30s"},
		{upload.BatchProgress{Bytes: 1 << 30, BytesDone: 1 << 29, Rate: 1 << 20, ETA: 512 * time.Second, Retries: 1},
			"512.0 MiB/1.0 GiB 1.0 MiB/s ETA 8m32s, 1 retry"},
		{upload.BatchProgress{Bytes: 100, BytesDone: 100, Rate: 10, ETA: 0, Retries: 3, Resumes: 2},
			"100 B/100 B 10 B/s, 3 retries, 2 resumed"},
	} {
		if got := batchStatus(tc.b); got != tc.want {
			t.Errorf("batchStatus(%+v) = %q, want %q", tc.b, got, tc.want)
		}
	}
}

// The summary's rate is over the time transfers ran: an interrupted run that spent 8 of
// its 10 seconds saving and exiting reports the rate of its 2 seconds of transfer.
func TestSummaryRateOverTransferTime(t *testing.T) {
	s := summaryRecord{Files: 2, Uploaded: 1, Interrupted: 1, Bytes: 4 << 20, Transferred: 5 << 20, Seconds: 10, TransferSeconds: 2}
	want := "2 files: 1 uploaded, 0 failed, 1 interrupted; 4.0 MiB in 10.0s (2.0 MiB/s); 5.0 MiB transferred"
	if got := summaryLine(s); got != want {
		t.Errorf("summary %q\nwant    %q", got, want)
	}
}
