package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/gcsput/gcsput/cmd/gcsbench/internal/usage"
	"github.com/gcsput/gcsput/fakegcs"
)

// The sync scenario (issue 30.4): a tree of o.SyncFiles small files and
// o.SyncLarge large ones on a real disk (not a tmpfs, whose reads are no
// disk reads), synced to a fakegcs of its own by each client as a user
// runs it: the first sync, an unchanged resync, and a resync after
// o.SyncChange per cent of the small files were rewritten (same size, new
// bytes, new mtime). The page cache is dropped before each step where the
// machine lets us (root, a writable /proc/sys/vm/drop_caches); otherwise
// the report says so, and the bytes read count only what was not cached.
const (
	scenarioSync = "sync"
	syncPrefix   = "sync"
	syncPerDir   = 1000 // small files to a directory
)

// Steps of the sync scenario, in order.
var syncSteps = []string{"first", "unchanged", "changed"}

// syncClient is one client of the scenario: its command line from the
// tree and the server, and its environment.
type syncClient struct {
	name string
	bin  string // looked up in PATH, except gcsput's
	args func(e *syncEnv, srv *fakegcs.Server, tree string) []string
	env  func(e *syncEnv, srv *fakegcs.Server) []string
}

func syncClients() []syncClient {
	return []syncClient{
		{name: "gcsput", args: func(e *syncEnv, srv *fakegcs.Server, tree string) []string {
			return []string{e.bin, "sync", "-q", "--endpoint", srv.URL(),
				"--state-dir", filepath.Join(e.dir, "state-gcsput"), tree, "gs://" + bucketName + "/" + syncPrefix}
		}},
		{name: "gcloud", bin: "gcloud", args: func(e *syncEnv, srv *fakegcs.Server, tree string) []string {
			return []string{"gcloud", "storage", "rsync", "-r", tree, "gs://" + bucketName + "/" + syncPrefix}
		}, env: func(e *syncEnv, srv *fakegcs.Server) []string {
			return []string{
				"CLOUDSDK_CONFIG=" + filepath.Join(e.dir, "gcloud-config"),
				"CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE=" + serverURL(srv) + "/storage/v1/",
				"CLOUDSDK_AUTH_DISABLE_CREDENTIALS=true",
				"CLOUDSDK_CORE_PROJECT=gcsbench",
				"CLOUDSDK_CORE_DISABLE_PROMPTS=1",
				"CLOUDSDK_CORE_DISABLE_USAGE_REPORTING=true",
				"CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK=true",
				"CLOUDSDK_STORAGE_PARALLEL_COMPOSITE_UPLOAD_ENABLED=false",
			}
		}},
		{name: "rclone", bin: "rclone", args: func(e *syncEnv, srv *fakegcs.Server, tree string) []string {
			return []string{"rclone", "sync", tree, ":gcs:" + bucketName + "/" + syncPrefix}
		}, env: func(e *syncEnv, srv *fakegcs.Server) []string {
			return []string{
				"RCLONE_CONFIG=" + filepath.Join(e.dir, "rclone.conf"),
				"RCLONE_GCS_ENDPOINT=" + serverURL(srv) + "/storage/v1/",
				"RCLONE_GCS_ANONYMOUS=true",
				"RCLONE_GCS_NO_CHECK_BUCKET=true",
			}
		}},
	}
}

// serverURL is srv's URL; for a start-up measure, which has no server, a
// port nothing listens on.
func serverURL(srv *fakegcs.Server) string {
	if srv == nil {
		return "http://127.0.0.1:9"
	}
	return srv.URL()
}

// syncEnv is what the sync scenario's steps share.
type syncEnv struct {
	o        options
	cmdusage string // the executable that starts and measures each client
	bin      string // the gcsput executable
	dir      string // the tree, state and outputs
	log      io.Writer
}

// run builds the tree and the tools, then measures each available client's
// three steps into rep. A client that is not installed is skipped and
// named in rep; a failed step is recorded and the client's next steps are
// skipped; an error stops the scenario.
func (e *syncEnv) run(ctx context.Context, rep *syncReport) error {
	if err := os.MkdirAll(e.dir, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(e.dir)
	start := time.Now()
	var err error
	if e.cmdusage, e.bin, err = buildTools(ctx, e.o.Gcsput, e.dir); err != nil {
		return err
	}
	tree := filepath.Join(e.dir, "tree")
	if rep.treeBytes, err = buildSyncTree(ctx, tree, e.o); err != nil {
		return err
	}
	fmt.Fprintf(e.log, "sync: %d × %d B + %d × %d MiB in %s (%.0f MiB); setup %.1fs\n", e.o.SyncFiles, e.o.SyncFileSize,
		e.o.SyncLarge, e.o.SyncLargeSize>>20, tree, float64(rep.treeBytes)/(1<<20), time.Since(start).Seconds())
	for i, c := range syncClients() {
		if !e.o.wantsClient(c.name) {
			continue
		}
		if c.bin != "" {
			if _, err := exec.LookPath(c.bin); err != nil {
				rep.skipped = append(rep.skipped, fmt.Sprintf("%s: not installed (%v)", c.name, err))
				continue
			}
		}
		if err := e.client(ctx, rep, c, tree, uint64(i+1)); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// client measures c's three steps on a fakegcs of its own; seed makes the
// changed files' new bytes differ from one client to the next.
func (e *syncEnv) client(ctx context.Context, rep *syncReport, c syncClient, tree string, seed uint64) error {
	srv, err := fakegcs.New(fakegcs.Options{Backend: fakegcs.BackendDiscard, Buckets: []string{bucketName}})
	if err != nil {
		return err
	}
	defer srv.Close()
	e.startup(ctx, rep, c)
	for _, step := range syncSteps {
		if step == "changed" {
			n, err := changeSyncTree(tree, e.o, seed)
			if err != nil {
				return err
			}
			rep.changedBytes = n
		}
		m := syncMeasure{client: c.name, step: step}
		m.dropped = dropCaches()
		srv.ResetStats()
		spec := usage.Spec{Args: c.args(e, srv, tree), Stdout: filepath.Join(e.dir, c.name+".out"),
			Stderr: filepath.Join(e.dir, c.name+".err")}
		if c.env != nil {
			spec.Env = c.env(e, srv)
		}
		// 30 ms a file on top of a child's usual bound: gcloud moves small
		// files at 100–300 a second, and at 6 ms a file its first sync of
		// 100,000 was stopped at 90 % on a loaded machine.
		res, err := runMeasured(ctx, e.cmdusage, spec, childTimeout+time.Duration(e.o.SyncFiles)*30*time.Millisecond)
		m.Result = res
		for _, n := range srv.Stats().Requests {
			m.requests += n
		}
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("exit code %d", res.ExitCode)
		}
		if err != nil {
			stderr, _ := os.ReadFile(spec.Stderr)
			m.err = fmt.Errorf("%s %s: %w; stderr: %s", c.name, step, err, tail(string(stderr)))
		}
		rep.add(m)
		fmt.Fprintf(e.log, "sync %-7s %-9s %8.2fs read %9.1f MiB peak %6.0f MiB %8d requests%s\n", c.name, step,
			res.Seconds, float64(res.ReadBytes)/(1<<20), float64(res.PeakRSS)/(1<<20), m.requests, errSuffix(m.err))
		if m.err != nil || ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// startup measures what c reads from disk to start, its executable and
// libraries (gcloud: its Python code), with "version" after the page cache
// is dropped: the tree's share of a step is what it reads beyond that.
func (e *syncEnv) startup(ctx context.Context, rep *syncReport, c syncClient) {
	args := []string{e.bin, "version"}
	if c.bin != "" {
		args = []string{c.bin, "version"}
	}
	spec := usage.Spec{Args: args, Stdout: filepath.Join(e.dir, c.name+".version"), Stderr: filepath.Join(e.dir, c.name+".version.err")}
	if c.env != nil {
		spec.Env = c.env(e, nil)
	}
	dropCaches()
	res, err := runMeasured(ctx, e.cmdusage, spec, childTimeout)
	if err != nil || res.ExitCode != 0 {
		fmt.Fprintf(e.log, "sync %-7s start-up not measured: %v, exit %d\n", c.name, err, res.ExitCode)
		return
	}
	rep.startup[c.name] = res.ReadBytes
	fmt.Fprintf(e.log, "sync %-7s start-up   read %9.1f MiB\n", c.name, mib(res.ReadBytes))
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return " FAILED: " + err.Error()
}

// runMeasured runs spec through cmdusage (manyEnv.runCLI's way).
func runMeasured(ctx context.Context, cmdusage string, spec usage.Spec, timeout time.Duration) (usage.Result, error) {
	m := manyEnv{cmdusage: cmdusage}
	return m.runCLI(ctx, spec, timeout)
}

// dropCaches asks Linux to drop the clean page cache, so that the next
// step reads the tree from the disk; it reports whether it could (root,
// and a /proc/sys that a container lets it write).
func dropCaches() bool {
	if runtime.GOOS != "linux" {
		return false
	}
	f, err := os.OpenFile("/proc/sys/vm/drop_caches", os.O_WRONLY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	// sync first, or dirty pages of the tree just written stay cached.
	exec.Command("sync").Run()
	_, err = f.WriteString("3\n")
	return err == nil
}

// buildSyncTree writes o.SyncFiles small files of o.SyncFileSize bytes
// (syncPerDir to a directory) and o.SyncLarge files of o.SyncLargeSize
// under dir, of pseudo-random bytes, and returns the tree's size.
func buildSyncTree(ctx context.Context, dir string, o options) (int64, error) {
	dirs := (o.SyncFiles + syncPerDir - 1) / syncPerDir
	err := forEach(ctx, dirs, runtime.GOMAXPROCS(0), func(ctx context.Context, d int) error {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(syncName(d*syncPerDir))), 0o755); err != nil {
			return err
		}
		buf := make([]byte, o.SyncFileSize)
		rng := rand.NewChaCha8([32]byte{byte(d), byte(d >> 8), byte(d >> 16), byte(o.Seed)})
		for i := d * syncPerDir; i < min(o.SyncFiles, (d+1)*syncPerDir); i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			rng.Read(buf)
			if err := os.WriteFile(filepath.Join(dir, syncName(i)), buf, 0o644); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "large"), 0o755); err != nil {
		return 0, err
	}
	for i := range o.SyncLarge {
		if err := writeRandom(filepath.Join(dir, "large", fmt.Sprintf("big%02d", i)), o.SyncLargeSize, uint64(i)+o.Seed<<8); err != nil {
			return 0, err
		}
	}
	return int64(o.SyncFiles)*o.SyncFileSize + int64(o.SyncLarge)*o.SyncLargeSize, nil
}

func writeRandom(path string, size int64, seed uint64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	rng := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), 'L'})
	if _, err := io.CopyN(f, rng, size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// changeSyncTree rewrites every (100/o.SyncChange)-th small file with new
// bytes of the same size (so only the content and the mtime tell), and
// returns the bytes rewritten.
func changeSyncTree(dir string, o options, seed uint64) (int64, error) {
	step := max(1, int(100/o.SyncChange))
	buf := make([]byte, o.SyncFileSize)
	rng := rand.NewChaCha8([32]byte{byte(seed), 'C'})
	var n int64
	for i := 0; i < o.SyncFiles; i += step {
		rng.Read(buf)
		if err := os.WriteFile(filepath.Join(dir, syncName(i)), buf, 0o644); err != nil {
			return n, err
		}
		n += int64(len(buf))
	}
	if n == 0 {
		return 0, errors.New("sync: no file to change")
	}
	return n, nil
}

// syncName is the path of the tree's i-th small file, relative to it.
func syncName(i int) string { return fmt.Sprintf("d%04d/f%07d", i/syncPerDir, i) }
