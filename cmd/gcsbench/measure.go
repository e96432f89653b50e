package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

// sample is one measured transfer.
type sample struct {
	childResult
	// CPU is the child's user + system seconds, its whole life.
	CPU float64
	// MaxRSS is the child's peak resident set in bytes: what it measured
	// itself, else its rusage.
	MaxRSS int64
	// SrvCPU is the parent's CPU seconds during the run: the servers.
	SrvCPU float64
	// Moved is how many body bytes fakegcs received (upload) or sent
	// (download) in this run, and Faults how many faults it injected, of
	// FaultsArmed fixed ones (faults scenario only).
	Moved       int64
	Faults      int
	FaultsArmed int
	// Requests is how many API requests fakegcs served in this run, counted
	// the same way for every client (the plain client's are not).
	Requests int
	// Conns is how many connections fakegcs accepted in this run, and
	// ConnsBy how many of them carried requests, by protocol ("HTTP/1.1",
	// "HTTP/2.0"); the plain client's are not counted.
	Conns   int
	ConnsBy map[string]int
}

func (s sample) mbps() float64 {
	if s.Seconds <= 0 {
		return 0
	}
	return float64(s.Bytes) / s.Seconds / 1e6
}

func (s sample) filesps() float64 {
	if s.Seconds <= 0 {
		return 0
	}
	return float64(s.Files) / s.Seconds
}

// childTimeout bounds one child, so that a hung client fails its row instead
// of the whole run.
const childTimeout = 10 * time.Minute

// measure runs one transfer in a child process and checks what it moved.
func (e *env) measure(ctx context.Context, c client, sc scenario, op string, round int) (sample, error) {
	spec := e.spec(c, sc, op, round)
	defer os.RemoveAll(spec.DstDir)
	srv := e.fakes.server(c.name, op, sc)
	if sc.faults {
		if err := e.fakes.injectFaults(srv, op, sc.bytes(), e.o); err != nil {
			return sample{}, err
		}
	}
	if op == opDownload {
		prefault(sc.bytes() + 64<<20)
	}
	before := srv.Stats()
	s, err := e.runChild(ctx, spec)
	after := srv.Stats()
	s.Requests = requests(after) - requests(before)
	if c.name != clientHTTP && c.name != clientHTTPCRC {
		s.Conns, s.ConnsBy = connections(before, after)
	}
	if sc.faults {
		s.Faults, s.FaultsArmed = e.fakes.clearFaults()
		s.Moved = moved(before, after, op, spec.Prefix)
	}
	if err != nil {
		return s, err
	}
	return s, e.check(spec, srv)
}

func (e *env) runChild(ctx context.Context, spec *childSpec) (sample, error) {
	in, err := json.Marshal(spec)
	if err != nil {
		return sample{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, childTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.self, childCommand)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &stdout, &stderr
	before := selfCPU()
	runErr := cmd.Run()
	var s sample
	s.SrvCPU = selfCPU() - before
	if cmd.ProcessState != nil {
		s.CPU, s.MaxRSS = childUsage(cmd.ProcessState)
	}
	if err := json.Unmarshal(stdout.Bytes(), &s.childResult); err != nil {
		return s, fmt.Errorf("child: %v: %v; stderr: %s", runErr, err, tail(stderr.String()))
	}
	if s.PeakRSS > 0 {
		s.MaxRSS = s.PeakRSS
	}
	if s.Error != "" {
		return s, fmt.Errorf("%s; stderr: %s", s.Error, tail(stderr.String()))
	}
	if runErr != nil {
		return s, fmt.Errorf("child: %v; stderr: %s", runErr, tail(stderr.String()))
	}
	return s, nil
}

// check compares what the client moved with the sources: the server's
// record of an upload, the files of a download.
func (e *env) check(spec *childSpec, srv *fakegcs.Server) error {
	if spec.Op == opDownload {
		return e.data.checkFiles(spec.Files)
	}
	if spec.Client == clientHTTP || spec.Client == clientHTTPCRC {
		plain := e.plain
		if spec.Plain == e.plainTLS.urlOrNone() {
			plain = e.plainTLS
		}
		return e.data.checkUploaded(spec.Files, plain.uploaded(spec.Prefix))
	}
	got, err := uploaded(srv, spec.Prefix)
	if err != nil {
		return err
	}
	return e.data.checkUploaded(spec.Files, got)
}

// requests totals the requests of every operation.
func requests(st fakegcs.Stats) int {
	n := 0
	for _, c := range st.Requests {
		n += c
	}
	return n
}

// connections is how many connections the server accepted between two
// snapshots, and how many of them carried requests, by protocol.
func connections(before, after fakegcs.Stats) (int, map[string]int) {
	by := map[string]int{}
	for p, st := range after.Protocols {
		if n := st.Connections - before.Protocols[p].Connections; n > 0 {
			by[p] = n
		}
	}
	return after.Connections - before.Connections, by
}

// tail keeps the end of a child's stderr for an error message.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return s
}
