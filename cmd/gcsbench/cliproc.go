package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/gcsput/gcsput/cmd/gcsbench/internal/usage"
)

// The manyfiles scenario starts each gcsput through cmdusage (internal/
// cmdusage), which reports the command's time, CPU and peak RSS: see its
// package comment for why the peak RSS needs a small parent.

// Packages that buildTools builds.
const (
	gcsputPackage   = "github.com/gcsput/gcsput/cmd/gcsput"
	cmdusagePackage = "github.com/gcsput/gcsput/cmd/gcsbench/internal/cmdusage"
)

// buildTools returns the cmdusage executable, built from this module into
// dir, and the gcsput one: bin if given, else built the same way, so the
// figures are those of the source tree the benchmark is part of.
func buildTools(ctx context.Context, bin, dir string) (cmdusage, gcsput string, err error) {
	exe := func(name string) string {
		if runtime.GOOS == "windows" {
			name += ".exe"
		}
		return filepath.Join(dir, name)
	}
	pkgs := []string{cmdusagePackage}
	if bin == "" {
		pkgs = append(pkgs, gcsputPackage)
		bin = exe("gcsput")
	} else if bin, err = exec.LookPath(bin); err != nil {
		return "", "", err
	}
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("building %s (run gcsbench inside its module): %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	return exe("cmdusage"), bin, nil
}

// runCLI runs spec through cmdusage. cmdusage stops the command when ctx
// ends or timeout passes, and still reports.
func (m *manyEnv) runCLI(ctx context.Context, spec usage.Spec, timeout time.Duration) (usage.Result, error) {
	in, err := json.Marshal(spec)
	if err != nil {
		return usage.Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, m.cmdusage)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return usage.Result{}, err
	}
	// Closing stdin is how cmdusage is told to stop; it is killed only if
	// it has not exited a minute later.
	cmd.Cancel, cmd.WaitDelay = stdin.Close, time.Minute
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return usage.Result{}, err
	}
	_, werr := stdin.Write(append(in, '\n'))
	runErr := cmd.Wait()
	var res usage.Result
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil {
		return res, fmt.Errorf("cmdusage: %v, %v: %v; stderr: %s", runErr, werr, err, tail(errb.String()))
	}
	if res.Error != "" {
		return res, fmt.Errorf("%s: %s", filepath.Base(spec.Args[0]), res.Error)
	}
	return res, nil
}
