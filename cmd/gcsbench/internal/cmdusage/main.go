// Command cmdusage runs one command and reports its wall time, CPU time and
// peak resident set as JSON. gcsbench starts each gcsput of its manyfiles
// scenario through it.
//
// It exists for the peak RSS. Linux folds the high-water mark of the process
// that starts a command into the command's ru_maxrss (os/exec starts it with
// vfork, and exec records the borrowed memory's peak). gcsbench holds fakegcs
// with up to a million objects, and even a fresh gcsbench has some 27 MiB
// resident from its dependencies' initialisation; this program, which imports
// only the standard library, has about 2 MiB, so the figure it reports is the
// command's own unless the command stays below that.
//
// Usage: cmdusage < spec.json > result.json, where the spec is
//
//	{"args": ["gcsput", "cp", ...], "stdout": "FILE", "stderr": "FILE"}
//
// and the result {"start", "end" (Unix ns), "seconds", "cpu", "peak_rss"
// (bytes), "own_rss" (this program's peak, bytes), "exit_code", "error"}.
// The command is stopped when stdin reaches its end after the spec, so the
// caller keeps stdin open while it waits. cmdusage exits 0 when it could
// report, whatever the command's exit code.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gcsput/gcsput/cmd/gcsbench/internal/usage"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var sp usage.Spec
	if err := json.NewDecoder(os.Stdin).Decode(&sp); err != nil || len(sp.Args) == 0 {
		fmt.Fprintln(os.Stderr, "cmdusage: reading the spec:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		// Lives until stdin ends, which stops the command; the process
		// exits soon after either way.
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	if err := json.NewEncoder(os.Stdout).Encode(runCommand(ctx, sp)); err != nil {
		fmt.Fprintln(os.Stderr, "cmdusage:", err)
		os.Exit(1)
	}
}

// runCommand runs the command to its end and measures it.
func runCommand(ctx context.Context, sp usage.Spec) usage.Result {
	out, err := os.Create(sp.Stdout)
	if err != nil {
		return usage.Result{Error: err.Error()}
	}
	defer out.Close()
	errf, err := os.Create(sp.Stderr)
	if err != nil {
		return usage.Result{Error: err.Error()}
	}
	defer errf.Close()
	cmd := exec.CommandContext(ctx, sp.Args[0], sp.Args[1:]...)
	cmd.Stdout, cmd.Stderr = out, errf
	if len(sp.Env) > 0 {
		cmd.Env = append(os.Environ(), sp.Env...)
	}
	res := usage.Result{OwnRSS: ownPeakRSS()}
	start := time.Now()
	err = cmd.Run()
	end := time.Now()
	res.Start, res.End, res.Seconds = start.UnixNano(), end.UnixNano(), end.Sub(start).Seconds()
	if ps := cmd.ProcessState; ps != nil {
		res.CPU = (ps.UserTime() + ps.SystemTime()).Seconds()
		res.PeakRSS = maxRSS(ps)
		res.ReadBytes = readBytes(ps)
		res.ExitCode = ps.ExitCode()
	}
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || ctx.Err() != nil) {
		res.Error = err.Error()
	}
	return res
}

// ownPeakRSS is this process's peak resident set since its exec, in bytes
// (VmHWM; its ru_maxrss would include its parent's peak); 0 where /proc is
// not.
func ownPeakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
