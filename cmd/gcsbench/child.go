package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"
)

// childSpec is what the parent sends a child on stdin: one client doing one
// transfer of a set of files.
type childSpec struct {
	Client string `json:"client"`
	Op     string `json:"op"` // opUpload or opDownload
	// GCS is fakegcs's base URL ("http://127.0.0.1:N"), the upload or the
	// download server depending on Op.
	GCS string `json:"gcs"`
	// Plain is the base URL of the bare net/http handler.
	Plain  string `json:"plain"`
	Bucket string `json:"bucket"`
	// Files are the local files to upload, or the objects to download (their
	// Path is then the destination).
	Files []fileRef `json:"files"`
	// SrcDir holds every source file (uploads); DstDir receives every
	// download. The CLIs copy whole directories or wildcards.
	SrcDir string `json:"src_dir,omitempty"`
	DstDir string `json:"dst_dir,omitempty"`
	// Prefix is the object-name prefix of every file ("up/gcsput/r0/").
	Prefix    string `json:"prefix"`
	Parallel  int    `json:"parallel"`
	ChunkSize int64  `json:"chunk_size"`
	// Faults says fakegcs injects faults in this run; clients that need to
	// be told to retry are.
	Faults bool `json:"faults,omitempty"`
	// Capped says the run is the capped scenario's, or the wire's with the
	// large file: the CLIs use their parallel modes (see prepareGcloud).
	Capped bool `json:"capped,omitempty"`
	// SingleRequest makes the official client send each file in one
	// request (ChunkSize 0), as for official-single: the wire's small files.
	SingleRequest bool `json:"single_request,omitempty"`
	// CAFile, in the wire scenarios, holds the certificates of the TLS
	// servers to trust.
	CAFile string `json:"ca_file,omitempty"`
	// ConfigDir is a private configuration directory for the CLIs.
	ConfigDir string `json:"config_dir,omitempty"`
	// Profile, when set, is the file a Go child writes its CPU profile to.
	Profile string `json:"profile,omitempty"`
}

// fileRef is one file of a transfer: a local path and its object name.
type fileRef struct {
	Path   string `json:"path"`
	Object string `json:"object"` // without the prefix
	Size   int64  `json:"size"`
}

const (
	opUpload   = "upload"
	opDownload = "download"
)

// childResult is what a child reports on stdout.
type childResult struct {
	// Seconds is the wall time of the transfer itself, from the first request
	// to the last byte, without process start-up or client construction (for
	// a CLI, the CLI's whole run).
	Seconds float64 `json:"seconds"`
	Bytes   int64   `json:"bytes"`
	Files   int     `json:"files"`
	// Retries and Slept count the client's retries and the time from each
	// failed attempt to its retry, as attempts measures them below the Go
	// clients' retry loops (RetriesMeasured); the CLIs' are not measured.
	Retries         int     `json:"retries,omitempty"`
	Slept           float64 `json:"slept,omitempty"`
	RetriesMeasured bool    `json:"retries_measured,omitempty"`
	// PeakRSS is the peak resident set in bytes as the child sees it; see
	// peakRSS.
	PeakRSS int64  `json:"peak_rss"`
	Error   string `json:"error,omitempty"`
}

// runChild is the child process: read the spec, run the transfer, report.
func runChild(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) int {
	var spec childSpec
	if err := json.NewDecoder(stdin).Decode(&spec); err != nil {
		fmt.Fprintln(stderr, "gcsbench child: reading spec:", err)
		return 2
	}
	res, err := doTransfer(ctx, &spec)
	if err != nil {
		res.Error = err.Error()
	}
	if err := json.NewEncoder(stdout).Encode(res); err != nil {
		fmt.Fprintln(stderr, "gcsbench child:", err)
		return 1
	}
	if res.Error != "" {
		return 1
	}
	return 0
}

// doTransfer prepares the client (not timed), then times the transfer.
func doTransfer(ctx context.Context, spec *childSpec) (childResult, error) {
	c, ok := clientByName(spec.Client)
	if !ok {
		return childResult{}, fmt.Errorf("unknown client %q", spec.Client)
	}
	if spec.DstDir != "" {
		if err := os.MkdirAll(spec.DstDir, 0o755); err != nil {
			return childResult{}, err
		}
	}
	t, err := c.prepare(ctx, spec)
	if err != nil {
		return childResult{}, fmt.Errorf("%s: preparing: %w", spec.Client, err)
	}
	stopProfile, err := startProfile(spec.Profile)
	if err != nil {
		return childResult{}, err
	}
	start := time.Now()
	var res childResult
	if spec.Op == opUpload {
		res, err = t.upload(ctx)
	} else {
		res, err = t.download(ctx)
	}
	res.Seconds = time.Since(start).Seconds()
	stopProfile()
	res.PeakRSS = peakRSS()
	if err != nil {
		return res, fmt.Errorf("%s %s: %w", spec.Client, spec.Op, err)
	}
	if res.Files == 0 {
		res.Files = len(spec.Files)
		for _, f := range spec.Files {
			res.Bytes += f.Size
		}
	}
	return res, nil
}

func startProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
