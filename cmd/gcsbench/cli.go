package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"

	"github.com/gcsput/gcsput/internal/fill"
	"github.com/gcsput/gcsput/internal/state"
	"github.com/gcsput/gcsput/upload"
)

// cliTransfer runs an installed command-line client. Its figures include the
// CLI's own start-up (for gcloud, a Python interpreter), because that is
// what a user of the CLI pays too.
type cliTransfer struct {
	spec *childSpec
	bin  string
	env  []string
	// args builds the command line of one copy from a source and a
	// destination (a local path, or a gs:// URL the CLI's own way).
	args func(src, dst string) []string
	// remote turns an object name or prefix into the CLI's remote path.
	remote func(name string) string
	// wildcard says the CLI copies a directory's files as DIR/* (gcloud);
	// otherwise it copies DIR itself (rclone copy).
	wildcard bool
}

func (t *cliTransfer) upload(ctx context.Context) (childResult, error) {
	s := t.spec
	if len(s.Files) == 1 {
		return childResult{}, t.run(ctx, s.Files[0].Path, t.remote(s.Prefix+s.Files[0].Object))
	}
	group := path.Dir(s.Files[0].Object)
	return childResult{}, t.run(ctx, t.all(s.SrcDir, string(filepath.Separator)), t.remote(s.Prefix+group)+"/")
}

func (t *cliTransfer) download(ctx context.Context) (childResult, error) {
	s := t.spec
	if len(s.Files) == 1 {
		return childResult{}, t.run(ctx, t.remote(s.Prefix+s.Files[0].Object), s.Files[0].Path)
	}
	group := path.Dir(s.Files[0].Object)
	return childResult{}, t.run(ctx, t.all(t.remote(s.Prefix+group), "/"), s.DstDir+string(filepath.Separator))
}

// all names every file of a directory the CLI's way.
func (t *cliTransfer) all(dir, sep string) string {
	if t.wildcard {
		return dir + sep + "*"
	}
	return dir
}

func (t *cliTransfer) run(ctx context.Context, src, dst string) error {
	cmd := exec.CommandContext(ctx, t.bin, t.args(src, dst)...)
	cmd.Env = append(os.Environ(), t.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", t.bin, err, tail(out.String()))
	}
	return nil
}

// prepareGcloud points `gcloud storage` at fakegcs with a private
// configuration directory, no credentials and the benchmark's chunk size
// and parallelism, all through CLOUDSDK_* variables (one per property).
// Outside the capped scenario it moves one stream per file, as the other
// clients do; in it, it uses its parallel modes with gcsput's settings
// (gcloudParallel).
func prepareGcloud(_ context.Context, spec *childSpec) (transfer, error) {
	if err := os.MkdirAll(spec.ConfigDir, 0o700); err != nil {
		return nil, err
	}
	env := []string{
		"CLOUDSDK_CONFIG=" + spec.ConfigDir,
		"CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE=" + spec.GCS + "/storage/v1/",
		"CLOUDSDK_AUTH_DISABLE_CREDENTIALS=true",
		"CLOUDSDK_CORE_PROJECT=gcsbench",
		"CLOUDSDK_CORE_DISABLE_PROMPTS=1",
		"CLOUDSDK_CORE_DISABLE_USAGE_REPORTING=true",
		"CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK=true",
		"CLOUDSDK_STORAGE_UPLOAD_CHUNK_SIZE=" + strconv.FormatInt(spec.ChunkSize, 10),
	}
	if spec.CAFile != "" {
		// core/custom_ca_certs_file alone did not reach `gcloud storage
		// cp`'s requests here (certificate verify failed); requests' own
		// variable does.
		env = append(env, "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE="+spec.CAFile, "REQUESTS_CA_BUNDLE="+spec.CAFile)
	}
	if spec.Capped {
		env = append(env, gcloudParallel...)
		env = append(env, "CLOUDSDK_STORAGE_PARALLEL_COMPOSITE_UPLOAD_COMPONENT_SIZE="+strconv.FormatInt(gcloudComponentSize(spec.Files), 10))
	} else {
		// One stream per file, as for the other clients: no composite
		// uploads, and no sliced downloads (0 turns them off).
		env = append(env, "CLOUDSDK_STORAGE_PARALLEL_COMPOSITE_UPLOAD_ENABLED=false",
			"CLOUDSDK_STORAGE_SLICED_OBJECT_DOWNLOAD_THRESHOLD=0")
	}
	if len(spec.Files) > 1 {
		// Threads, not processes: the parallelism is that of the scenario.
		env = append(env, "CLOUDSDK_STORAGE_PROCESS_COUNT=1",
			"CLOUDSDK_STORAGE_THREAD_COUNT="+strconv.Itoa(spec.Parallel))
	}
	return &cliTransfer{
		spec:     spec,
		bin:      "gcloud",
		env:      env,
		args:     func(src, dst string) []string { return []string{"storage", "cp", "--quiet", src, dst} },
		remote:   func(name string) string { return "gs://" + spec.Bucket + "/" + name },
		wildcard: true,
	}, nil
}

// gcloud's thresholds and sizes in the capped scenario: gcsput's defaults
// (upload.Options SliceThreshold, and ParallelThreshold and the components
// of its parallel composite uploads, gcloudComponentSize) instead of
// gcloud's own (150 MiB and 50 MiB components for uploads; for one file on
// fewer than 8 CPUs, 50 MiB and 8 slices for downloads).
const (
	gcloudSliceThreshold     = upload.DefaultSliceThreshold
	gcloudCompositeThreshold = 128 << 20
)

// gcloudComponentSize is the size of the components gcsput cuts the
// largest of files into at its defaults (whole rounds of its default
// streams, internal/fill), so that gcloud uploads the same components.
func gcloudComponentSize(files []fileRef) int64 {
	var size int64
	for _, f := range files {
		size = max(size, f.Size)
	}
	per, _ := fill.ComponentSize(size, fill.ComponentLeast(size, upload.DefaultParallelism, state.MaxComponents), state.MaxComponents)
	return per
}

// gcloudProcesses is gcloud's process count in the capped scenario; its
// threads are gcsput's default streams over it, which it must divide (the
// array index below fails to compile otherwise).
const gcloudProcesses = 4

var _ = [1]int{}[upload.DefaultParallelism%gcloudProcesses]

// gcloudParallel is gcloud's configuration in the capped scenario: parallel
// composite uploads enabled (they are off unless configured: its default
// asks), sliced downloads on (its default), with gcsput's thresholds and
// sizes (gcloudComponentSize, set per run), and gcsput's default streams
// (-j 12) as 4 processes × 3 threads (gcloud picks 4 × 2 itself for one file
// on fewer than 8 CPUs). It still asks fakegcs for the bucket's storage
// class and retention before composing.
var gcloudParallel = []string{
	"CLOUDSDK_STORAGE_PARALLEL_COMPOSITE_UPLOAD_ENABLED=True",
	"CLOUDSDK_STORAGE_PARALLEL_COMPOSITE_UPLOAD_THRESHOLD=" + strconv.Itoa(gcloudCompositeThreshold),
	"CLOUDSDK_STORAGE_SLICED_OBJECT_DOWNLOAD_THRESHOLD=" + strconv.Itoa(gcloudSliceThreshold),
	"CLOUDSDK_STORAGE_SLICED_OBJECT_DOWNLOAD_MAX_COMPONENTS=" + strconv.Itoa(upload.DefaultMaxSlices),
	"CLOUDSDK_STORAGE_PROCESS_COUNT=" + strconv.Itoa(gcloudProcesses),
	"CLOUDSDK_STORAGE_THREAD_COUNT=" + strconv.Itoa(upload.DefaultParallelism/gcloudProcesses),
}

// prepareRclone uses an on-the-fly ":gcs:" remote configured by RCLONE_*
// variables: fakegcs's endpoint, anonymous access, no bucket creation.
func prepareRclone(_ context.Context, spec *childSpec) (transfer, error) {
	if err := os.MkdirAll(spec.ConfigDir, 0o700); err != nil {
		return nil, err
	}
	env := []string{
		"RCLONE_CONFIG=" + filepath.Join(spec.ConfigDir, "rclone.conf"),
		"RCLONE_GCS_ENDPOINT=" + spec.GCS + "/storage/v1/",
		"RCLONE_GCS_ANONYMOUS=true",
		"RCLONE_GCS_NO_CHECK_BUCKET=true",
		// One stream per file, as for the other clients: no multi-thread
		// downloads of large files. (Its GCS backend has no chunk size
		// option: it sends google-api-go-client's default 16 MiB chunks.)
		"RCLONE_MULTI_THREAD_STREAMS=0",
		"RCLONE_TRANSFERS=" + strconv.Itoa(max(spec.Parallel, 1)),
		"RCLONE_CHECKERS=" + strconv.Itoa(max(spec.Parallel, 1)),
	}
	if spec.CAFile != "" {
		env = append(env, "RCLONE_CA_CERT="+spec.CAFile)
	}
	return &cliTransfer{
		spec: spec,
		bin:  "rclone",
		env:  env,
		args: func(src, dst string) []string {
			if len(spec.Files) == 1 {
				return []string{"copyto", src, dst}
			}
			return []string{"copy", src, dst}
		},
		remote: func(name string) string { return ":gcs:" + spec.Bucket + "/" + name },
	}, nil
}
