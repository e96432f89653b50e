package upload

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/internal/state"
)

// The kill-and-resume tests run a transfer in a child process (this test
// binary, re-executed with GCSPUT_HELPER set), SIGKILL it mid-transfer, and
// finish the job in the test process from the state the child left.

func TestMain(m *testing.M) {
	if mode := os.Getenv("GCSPUT_HELPER"); mode != "" {
		os.Exit(helperMain(mode))
	}
	os.Exit(m.Run())
}

// helperMain is the child: one upload (a composite one in mode
// "composite") or download (sliced in mode "sliced-download"), configured
// by the environment, with GCS's real retry policy.
func helperMain(mode string) int {
	opts := Options{
		Endpoint: os.Getenv("GCSPUT_ENDPOINT"), Auth: auth.Options{NoAuth: true},
		StateDir: os.Getenv("GCSPUT_STATE"), ChunkSize: 256 << 10, SmallFileThreshold: -1,
	}
	switch mode {
	case "sliced-download":
		opts.SliceThreshold, opts.MaxSlices = 1<<20, 4
	case "composite":
		compositeHelperOptions(&opts)
	}
	c, err := New(context.Background(), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	u := URL{Bucket: testBucket, Object: "big.bin"}
	if mode == "upload" || mode == "composite" {
		_, err = c.UploadFile(context.Background(), os.Getenv("GCSPUT_FILE"), u, UploadOptions{})
	} else {
		_, err = c.Download(context.Background(), u, os.Getenv("GCSPUT_FILE"), DownloadOptions{})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startHelper starts the child and returns it.
func startHelper(t *testing.T, mode, endpoint, state, file string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GCSPUT_HELPER="+mode, "GCSPUT_ENDPOINT="+endpoint,
		"GCSPUT_STATE="+state, "GCSPUT_FILE="+file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("child stderr: %s", stderr.String())
		}
	})
	return cmd
}

// waitFor polls cond every 10 ms for up to 60 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// kill SIGKILLs the child and waits until it is gone.
func kill(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}

func TestKillAndResumeUpload(t *testing.T) {
	srv := newServer(t, fakegcs.Options{DisableMD5: true})
	throttle := srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk,
		Kind: fakegcs.KindThrottle, BytesPerSecond: 2 << 20, Times: -1})
	data := randBytes(8<<20, 20)
	src := writeTemp(t, t.TempDir(), "big.bin", data)
	state := t.TempDir()
	cmd := startHelper(t, "upload", srv.URL(), state, src)
	waitFor(t, "1 MiB persisted", func() bool {
		s, ok := srv.LastSession(testBucket, "big.bin")
		return ok && s.Persisted >= 1<<20
	})
	kill(t, cmd)
	// Let the server finish the dead connection's request (every insert that arrived is
	// in the log once its handler returned), then take its word.
	waitFor(t, "the server to finish the killed request", func() bool {
		n := 0
		for _, r := range srv.Log() {
			if r.Op == "storage.objects.insert" {
				n++
			}
		}
		return n == srv.Count("storage.objects.insert")
	})
	before, _ := srv.LastSession(testBucket, "big.bin")
	if before.State != "active" || before.Persisted >= int64(len(data)) {
		t.Fatalf("killed too late: session %+v", before)
	}
	throttle.Remove()

	c := newClient(t, srv, func(o *Options) { o.StateDir = state; o.SmallFileThreshold = -1 })
	r, err := c.UploadFile(context.Background(), src, URL{testBucket, "big.bin"}, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantObject(t, srv, "big.bin", data)
	after, _ := srv.LastSession(testBucket, "big.bin")
	sent := after.Received - before.Received
	t.Logf("killed at %d persisted (%d received); the rerun sent %d bytes", before.Persisted, before.Received, sent)
	if after.Seq != before.Seq || r.Status != StatusResumed || r.ResumedFrom != before.Persisted {
		t.Errorf("rerun: session %d→%d, %s from %d; want resumed from %d", before.Seq, after.Seq, r.Status, r.ResumedFrom, before.Persisted)
	}
	if want := int64(len(data)) - before.Persisted; sent != want || r.Transferred != want {
		t.Errorf("rerun sent %d bytes (result: %d); want exactly the %d the server lacked", sent, r.Transferred, want)
	}
}

func TestKillAndResumeDownload(t *testing.T) {
	srv := newServer(t, fakegcs.Options{DisableMD5: true})
	data := randBytes(8<<20, 21)
	srv.PutObject(testBucket, "big.bin", data)
	throttle := srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Kind: fakegcs.KindThrottle, BytesPerSecond: 2 << 20, Times: -1})
	dst := filepath.Join(t.TempDir(), "big.bin")
	partial := filepath.Join(filepath.Dir(dst), ".big.bin"+partialSuffix)
	state := t.TempDir()
	cmd := startHelper(t, "download", srv.URL(), state, dst)
	waitFor(t, "1 MiB written", func() bool {
		fi, err := os.Stat(partial)
		return err == nil && fi.Size() >= 1<<20
	})
	kill(t, cmd)
	fi, err := os.Stat(partial)
	if err != nil || fi.Size() >= int64(len(data)) {
		t.Fatalf("partial file after kill: %v %v", fi, err)
	}
	have := fi.Size()
	throttle.Remove()
	logBefore := len(srv.Log())

	c := newClient(t, srv, func(o *Options) { o.StateDir = state })
	r, err := c.Download(context.Background(), URL{testBucket, "big.bin"}, dst, DownloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(dst)
	if !bytes.Equal(got, data) || r.Status != StatusResumed || r.ResumedFrom != have {
		t.Fatalf("rerun: %s from %d (partial had %d), equal %v", r.Status, r.ResumedFrom, have, bytes.Equal(got, data))
	}
	var media int64
	for _, q := range srv.Log()[logBefore:] {
		if q.Range != "" {
			media += q.BytesOut
			if want := fmt.Sprintf("bytes=%d-", have); q.Range != want {
				t.Errorf("rerun asked for %s, want %s", q.Range, want)
			}
		}
	}
	if want := int64(len(data)) - have; media != want || r.Transferred != want {
		t.Errorf("rerun received %d bytes (result: %d); want exactly the %d missing", media, r.Transferred, want)
	}
}

// TestKillAndResumeSlicedDownload kills a process whose download runs in 4
// slices, once its record shows 8 MiB written; the rerun continues each
// slice from the Done its record kept, and fetches exactly the rest.
func TestKillAndResumeSlicedDownload(t *testing.T) {
	srv := newServer(t, fakegcs.Options{DisableMD5: true})
	data := randBytes(24<<20, 22)
	srv.PutObject(testBucket, "big.bin", data)
	throttle := srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Kind: fakegcs.KindThrottle, BytesPerSecond: 2 << 20, Times: -1})
	dst := filepath.Join(t.TempDir(), "big.bin")
	stateDir := t.TempDir()
	cmd := startHelper(t, "sliced-download", srv.URL(), stateDir, dst)
	var plan []state.Slice
	waitFor(t, "a record of 8 MiB written", func() bool {
		st, err := state.Open(stateDir)
		if err != nil {
			return false
		}
		recs, _ := st.List()
		if len(recs) != 1 || recs[0].Download == nil || recs[0].Offset < 8<<20 {
			return false
		}
		plan = recs[0].Download.Slices
		return true
	})
	kill(t, cmd)
	if err := state.CheckSlices(plan, int64(len(data))); err != nil || len(plan) != 4 {
		t.Fatalf("saved plan %v: %v", plan, err)
	}
	var have int64
	want := map[string]bool{}
	for _, sl := range onlyRecord(t, stateDir).Download.Slices {
		have += sl.Done - sl.Start
		if sl.Done < sl.End {
			want[fmt.Sprintf("bytes=%d-%d", sl.Done, sl.End-1)] = true
		}
	}
	throttle.Remove()
	logBefore := srv.Count("storage.objects.get")
	c := newClient(t, srv, func(o *Options) { sliced(o); o.StateDir = stateDir })
	r, err := c.Download(context.Background(), URL{testBucket, "big.bin"}, dst, DownloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(dst)
	if !bytes.Equal(got, data) || r.Status != StatusResumed || r.ResumedFrom != have || r.Transferred != int64(len(data))-have {
		t.Fatalf("rerun: %s from %d (record had %d), transferred %d, equal %v", r.Status, r.ResumedFrom, have, r.Transferred, bytes.Equal(got, data))
	}
	// One metadata GET (the partial file asks for the generation), then one
	// ranged GET per unfinished slice, from its Done to its End.
	if n := srv.Count("storage.objects.get") - logBefore; n != len(want)+1 {
		t.Errorf("rerun made %d GETs, want %d (a stat, one per unfinished slice)", n, len(want)+1)
	}
	waitFor(t, "the rerun's ranged GETs logged", func() bool {
		seen := map[string]bool{}
		for _, q := range srv.Log() {
			if want[q.Range] {
				seen[q.Range] = true
			}
		}
		return len(seen) == len(want)
	})
}
